// The command line's ClickHouse parts: hash --format tsv, sql --engine clickhouse, dedup --clickhouse. The SQL the
// `sql` command prints is run as printed, by hand, on the cluster (when SIMHASH_CLICKHOUSE is set), with the
// fingerprints `hash --format tsv` printed, and must give findNearDuplicates' pairs.
import { createClient } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { findNearDuplicates } from '../../src/join/find-near-duplicates.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { ONCE } from '../e2e/gate.js';
import { runCli } from '../cli/run.js';
import { clickhouseGate } from './gate.js';

const gate = clickhouseGate();
const docs = Array.from({ length: 300 }, (_, i) =>
  i % 3 === 0 ? `the same document number ${i >> 2} with a few words more` : `document ${i} says ${i * 7919} things`,
);

describe.runIf(ONCE)('simhash-wasm CLI, ClickHouse parts', () => {
  it('hash --format tsv prints index and fingerprint as UInt64 decimals (128 bits: low, high)', () => {
    for (const bits of [64, 128] as const) {
      const r = runCli(['hash', '--format', 'tsv', '--lines', '--bits', String(bits)], { input: docs.join('\n') });
      expect(r.code).toBe(0);
      const fps = simhashMany(docs, { bits });
      const want = docs.map((_, i) => (bits === 64 ? `${i}\t${fps[i]}` : `${i}\t${fps[2 * i]}\t${fps[2 * i + 1]}`));
      expect(r.stdout.trimEnd().split('\n')).toEqual(want);
    }
  });

  it('sql --engine clickhouse prints the DDL and the join round by round; bad arguments are usage errors', () => {
    const r = runCli(['sql', '--engine', 'clickhouse', '--k', '3', '--bits', '128', '--shards', '3', '--table', 'x']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^CREATE TABLE default\.x_fp \(id UInt64, fp UInt64, fp_hi UInt64\)/m);
    const rounds = r.stdout.match(/^-- round \d+$/gm)?.length ?? 0;
    expect(rounds).toBeGreaterThan(0);
    expect(r.stdout.match(/^SELECT id AS a/gm)).toHaveLength(rounds);
    expect(r.stdout.match(/^CREATE TABLE default\.x_join_\d+ \(.*\) ENGINE = Memory;$/gm)).toHaveLength(rounds);
    expect(r.stdout.match(/^INSERT INTO default\.x_join_\d+_all SELECT /gm)).toHaveLength(rounds);
    for (const args of [
      ['sql', '--k', '3'],
      ['sql', '--engine', 'postgres', '--k', '3'],
      ['sql', '--engine', 'clickhouse'],
      ['sql', '--engine', 'clickhouse', '--k', '65'],
      ['sql', '--engine', 'clickhouse', '--k', '3', '--table', 'a;b'],
    ]) {
      const bad = runCli(args);
      expect(bad.code, args.join(' ')).toBe(2);
    }
  });
});

describe.runIf(ONCE && gate.urls.length > 0)('simhash-wasm CLI on the ClickHouse cluster', () => {
  it('the printed SQL, run by hand on the fingerprints hash --format tsv printed, gives findNearDuplicates pairs', async () => {
    const shards = gate.urls.length;
    const table = `simhash_cli_test_${process.pid}`;
    const sql = runCli(['sql', '--engine', 'clickhouse', '--k', '6', '--shards', String(shards), '--table', table]);
    expect(sql.code).toBe(0);
    const tsv = runCli(['hash', '--format', 'tsv', '--lines'], { input: docs.join('\n') });
    const statements = (text: string) =>
      text
        .split(';\n')
        .map((s) => s.replace(/^(--.*\n|\n)*/g, '').trim())
        .filter((s) => s !== '');
    const [ddl, joinPart] = sql.stdout.split('\n-- 3.');
    const creates = statements(ddl!);
    // The SET line, then round by round: two CREATEs, the scatter, the join, two DROPs.
    const [setLine, ...roundParts] = joinPart!.split(/\n-- round \d+\n/);
    const set = /^SET (.*);$/m.exec(setLine!)?.[0].slice(0, -1) ?? '';
    expect(set).toBe('SET insert_distributed_sync = 1');
    const settings = Object.fromEntries(
      set
        .slice(4)
        .split(', ')
        .map((kv) => kv.split(' = ')),
    );
    const rounds = roundParts.map(statements);
    expect(rounds.length).toBeGreaterThan(0);
    const clients = gate.urls.map((url) => createClient({ url }));
    try {
      for (const c of clients) for (const s of creates) await c.command({ query: s });
      // Half the rows into the first shard, half into the last: any spread works.
      const lines = tsv.stdout.trimEnd().split('\n');
      const half = lines.length >> 1;
      for (const [c, part] of [
        [clients[0]!, lines.slice(0, half)],
        [clients[shards - 1]!, lines.slice(half)],
      ] as const) {
        await c.command({ query: `INSERT INTO default.${table}_fp FORMAT TabSeparated\n${part.join('\n')}\n` });
      }
      const got: string[] = [];
      // Each statement on every shard, every shard done before the next statement.
      const onEvery = (query: string, extra = {}) =>
        Promise.all(clients.map((c) => c.command({ query, clickhouse_settings: extra })));
      for (const round of rounds) {
        expect(round).toHaveLength(6);
        const [create1, create2, scatter, join, drop1, drop2] = round;
        expect(create1).toMatch(/^CREATE TABLE .* ENGINE = Memory$/);
        expect(create2).toMatch(/^CREATE TABLE .* ENGINE = Distributed\(/);
        expect(scatter).toMatch(/^INSERT INTO .* SELECT /);
        expect(drop1).toMatch(/^DROP TABLE/);
        expect(drop2).toMatch(/^DROP TABLE/);
        await onEvery(create1!);
        await onEvery(create2!);
        await onEvery(scatter!, settings);
        for (const c of clients) {
          const rs = await c.query({ query: join!, format: 'TabSeparated' });
          for (const line of (await rs.text()).split('\n')) if (line) got.push(line.split('\t').join(','));
        }
        await onEvery(drop1!);
        await onEvery(drop2!);
      }
      const p = findNearDuplicates(simhashMany(docs), { k: 6 });
      const want = Array.from(p.a, (a, i) => `${a},${p.b[i]},${p.distance[i]}`);
      expect(want.length).toBeGreaterThan(20);
      expect(got.sort()).toEqual(want.sort());
    } finally {
      for (const c of clients) {
        for (const suffix of ['_keys_mv', '_keys_all', '_fp_all', '_keys', '_fp', '_meta'])
          await c.command({ query: `DROP TABLE IF EXISTS default.${table}${suffix}` });
        await c.close();
      }
    }
  });

  it('dedup --clickhouse prints what dedup --no-verify prints', () => {
    const input = docs.join('\n');
    for (const extra of [[], ['--pairs'], ['--format', 'csv', '--bits', '128']]) {
      const local = runCli(['dedup', '--no-verify', '--k', '4', '--lines', ...extra], { input });
      const cluster = runCli(
        ['dedup', '--no-verify', '--k', '4', '--lines', '--clickhouse', gate.urls.join(','), ...extra],
        { input },
      );
      expect(cluster.stderr).toBe('');
      expect(cluster.code).toBe(0);
      expect(cluster.stdout).toBe(local.stdout);
      expect(local.stdout.length).toBeGreaterThan(100);
    }
  });
});
