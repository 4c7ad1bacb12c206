// simhash-wasm/clickhouse on a real cluster (SIMHASH_CLICKHOUSE, test/clickhouse/gate.ts; .ci/run starts 3 local
// shards with scripts/clickhouse-cluster.sh): the cluster's pairs equal findNearDuplicates exactly, lookups equal
// FingerprintIndex.query, the server computes the same keys as fingerprintKeys, ids past 2^32 survive, and a shard
// stopped mid-insert fails the insert with an error naming it and leaves tables that never count as complete.
// Runs once, in the simd project (the cluster is shared; the scalar build adds nothing to SQL).
import { execFileSync } from 'node:child_process';
import { createClient } from '@clickhouse/client';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ClickHouseTables,
  createClickHouseTables,
  joinRounds,
  openClickHouseTables,
} from '../../src/clickhouse/index.js';
import { fingerprintKeys } from '../../src/clickhouse/plan.js';
import { findNearDuplicates } from '../../src/join/find-near-duplicates.js';
import { FingerprintIndex } from '../../src/fingerprint-index/fingerprint-index.js';
import { rng } from '../reference.js';
import { ONCE } from '../e2e/gate.js';
import { plantedFingerprints, valueAt } from './data.js';
import { clickhouseGate } from './gate.js';

const gate = clickhouseGate();
const root = path.resolve(import.meta.dirname, '../..');
const prefix = `simhash_test_${process.pid}`;
const opened: ClickHouseTables[] = [];

if (gate.skipped && ONCE) console.log(`skipped: ${gate.skipped}`);

async function create(name: string, k: number, bits: 64 | 128, expectedSize: number): Promise<ClickHouseTables> {
  const tables = await createClickHouseTables({ urls: gate.urls, table: `${prefix}_${name}`, k, bits, expectedSize });
  opened.push(tables);
  return tables;
}

async function clusterPairs(tables: ClickHouseTables, ids?: BigUint64Array): Promise<string[]> {
  const out: string[] = [];
  const index = new Map<bigint, number>();
  ids?.forEach((id, i) => index.set(id, i));
  for await (const p of tables.pairs()) {
    for (let i = 0; i < p.a.length; i++) {
      const a = ids ? index.get(p.a[i]!)! : Number(p.a[i]);
      const b = ids ? index.get(p.b[i]!)! : Number(p.b[i]);
      out.push(`${Math.min(a, b)},${Math.max(a, b)},${p.distance[i]}`);
    }
  }
  return out.sort();
}

function localPairs(fps: BigUint64Array, k: number, bits: 64 | 128): string[] {
  const p = findNearDuplicates(fps, { k, bits });
  return Array.from(p.a, (a, i) => `${a},${p.b[i]},${p.distance[i]}`).sort();
}

/** The batches of an async insert: `size` fingerprints at a time, awaiting between them like a real producer. */
async function* batches(fps: BigUint64Array, words: number, size: number): AsyncGenerator<BigUint64Array> {
  for (let at = 0; at < fps.length; at += size * words) {
    await new Promise((resolve) => setImmediate(resolve));
    yield fps.subarray(at, at + size * words);
  }
}

function cluster(...args: string[]): string {
  return execFileSync('bash', [path.join(root, 'scripts/clickhouse-cluster.sh'), ...args], { encoding: 'utf8' });
}

describe.runIf(ONCE && gate.missing !== undefined)('ClickHouse cluster', () => {
  it('is required (SIMHASH_E2E=1) but SIMHASH_CLICKHOUSE is unset', () => {
    throw new Error(gate.missing);
  });
});

describe.runIf(ONCE && gate.urls.length > 0)('ClickHouse cluster join and lookups', () => {
  afterAll(async () => {
    for (const t of opened) {
      await t.drop().catch(() => undefined);
      await t.close();
    }
  });

  const n = 100_000;
  for (const [bits, k, streamed] of [
    [64, 0, false],
    [64, 3, true],
    [64, 6, false],
    [128, 4, true],
  ] as const) {
    it(`pairs equal findNearDuplicates on ${n} planted fingerprints (${bits} bits, k = ${k})`, async () => {
      const words = bits / 64;
      const fps = plantedFingerprints(n, k, bits, 100 + k);
      const tables = await create(`join_${bits}_${k}`, k, bits, n);
      const inserted = await tables.insert(streamed ? batches(fps, words, 7000) : fps);
      expect(inserted).toBe(n);
      expect((await tables.finish()).complete).toBe(true);
      const want = localPairs(fps, k, bits);
      // The data holds pairs at every distance 0..k + 1 and 20 copies of one value (190 pairs at distance 0).
      for (let d = 0; d <= k; d++) expect(want.some((p) => p.endsWith(`,${d}`))).toBe(true);
      expect(want.filter((p) => p.endsWith(',0')).length).toBeGreaterThanOrEqual(190);
      expect(await clusterPairs(tables)).toEqual(want);

      if (bits === 64 && k === 3) {
        // Lookups against the in-memory index: members, members moved by 1..k + 2 bits, random values; at k, below
        // it (key probes) and above it (a scan).
        const index = new FingerprintIndex({ bits, maxDistance: 6 });
        index.addMany(
          Array.from({ length: n }, (_, i) => i),
          fps,
        );
        const next = rng(9);
        for (let q = 0; q < 24; q++) {
          const member = fps[Math.floor(next() * n)]!;
          let probe = member;
          for (let f = 0; f < q % (k + 3); f++) probe ^= 1n << BigInt(Math.floor(next() * 64));
          if (q % 8 === 7) probe = BigInt(Math.floor(next() * 2 ** 52)) << 12n;
          for (const kk of [k, k - 1, k + 2]) {
            const got = await tables.query(probe, kk);
            const want = index.query(probe, kk);
            expect({ id: Array.from(got.id, Number), distance: got.distance }).toEqual(want);
          }
        }
        index.free();
      }
    });
  }

  it('joins in several rounds; a pairs() stopped early drops its round tables, and the next one gives every pair', async () => {
    // Planned for 2·10^7 (one key part per pass, so several rounds), holding only a few thousand.
    const n = 3000;
    const fps = plantedFingerprints(n, 3, 64, 77);
    const tables = await create('rounds', 3, 64, 2e7);
    expect(joinRounds(tables.plan).length).toBeGreaterThan(2);
    await tables.insert(fps);
    await tables.finish();
    const joinTables = async () => {
      const names: string[] = [];
      for (const url of gate.urls) {
        const c = createClient({ url });
        const rs = await c.query({
          query: `SELECT name FROM system.tables WHERE database = 'default' AND name LIKE '${prefix}_rounds_join_%'`,
          format: 'TabSeparated',
        });
        names.push(...(await rs.text()).split('\n').filter((l) => l !== ''));
        await c.close();
      }
      return names;
    };
    for await (const batch of tables.pairs()) {
      expect(batch.a.length).toBeGreaterThan(0);
      break;
    }
    expect(await joinTables()).toEqual([]);
    expect(await clusterPairs(tables)).toEqual(localPairs(fps, 3, 64));
    expect(await joinTables()).toEqual([]);
  });

  it('keeps ids past 2^32, and the server computes the keys fingerprintKeys computes', async () => {
    const count = 3000;
    const fps = plantedFingerprints(count, 3, 128, 77);
    const ids = new BigUint64Array(count);
    for (let i = 0; i < count; i++)
      ids[i] = i % 2 === 0 ? 2n ** 32n + BigInt(i) * 1_000_003n : 2n ** 64n - 1n - BigInt(i);
    const tables = await create('ids', 3, 128, count);
    await tables.insert(fps, { ids });
    await tables.finish();
    expect(await clusterPairs(tables, ids)).toEqual(localPairs(fps, 3, 128));
    const hits = await tables.query(valueAt(fps, 128, 5), 0);
    expect(Array.from(hits.id)).toContain(ids[5]);

    const lookup = tables.lookupPlan!;
    expect(lookup).not.toBeNull();
    const want: string[] = [];
    for (let i = 0; i < count; i++)
      for (const key of fingerprintKeys(lookup, fps[2 * i]!, fps[2 * i + 1]!)) want.push(`${ids[i]} ${key}`);
    const client = createClient({ url: gate.urls[0]! });
    const rs = await client.query({
      query: `SELECT id, key FROM default.${prefix}_ids_keys_all`,
      format: 'TabSeparated',
    });
    const rows = (await rs.text()).split('\n').filter((l) => l !== '');
    await client.close();
    expect(rows.map((r) => r.replace('\t', ' ')).sort()).toEqual(want.sort());
  });

  it('refuses bad input with TypeError or RangeError and stays usable', async () => {
    const tables = await create('bad', 3, 128, 100);
    await expect(tables.insert('x' as never)).rejects.toThrow(TypeError);
    await expect(tables.insert(new BigUint64Array(3))).rejects.toThrow(/two words each, got 3 words/);
    await expect(tables.insert(new BigUint64Array(4), { ids: new BigUint64Array(3) })).rejects.toThrow(RangeError);
    await expect(tables.insert([new BigUint64Array(2), 5 as never])).rejects.toThrow(TypeError);
    // The batches before the bad one went in; the insert never recorded its end, so the tables never complete.
    await expect(tables.pairs().next()).rejects.toThrow(/not complete/);
    await tables.drop();
    const fresh = await create('bad2', 3, 64, 100);
    await fresh.insert(new BigUint64Array([1n, 3n, 0xffn]));
    await fresh.finish();
    await expect(fresh.query(-1n)).rejects.toThrow(RangeError);
    await expect(fresh.query(1n << 64n)).rejects.toThrow(/unsigned 64-bit/);
    await expect(fresh.query(1 as never)).rejects.toThrow(TypeError);
    await expect(fresh.query(1n, 65)).rejects.toThrow(/k must be an integer from 0 to 64, got 65/);
    await expect(fresh.insert(new BigUint64Array([5n]))).rejects.toThrow(/complete/);
    expect(await fresh.query(1n, 1)).toEqual({
      id: new BigUint64Array([0n, 1n]),
      distance: new Uint8Array([0, 1]),
    });
    await expect(openClickHouseTables({ urls: gate.urls.slice(0, 1), table: `${prefix}_bad2` })).rejects.toThrow(
      /has \d+ shards in remote_servers, but 1 URLs were given/,
    );
  });

  it('fails an insert whose shard stops, naming it, and never reports those tables complete', async () => {
    const last = gate.urls.length;
    const status = cluster('status');
    expect(status, 'this test stops a shard through scripts/clickhouse-cluster.sh').toMatch(
      new RegExp(`shard ${last} running`),
    );
    const fps = plantedFingerprints(200_000, 3, 64, 5);
    const tables = await create('stopped', 3, 64, 200_000);
    async function* stopping(): AsyncGenerator<BigUint64Array> {
      let i = 0;
      for await (const batch of batches(fps, 1, 10_000)) {
        if (i++ === 3) cluster('stop', String(last));
        yield batch;
      }
    }
    try {
      await expect(tables.insert(stopping())).rejects.toThrow(new RegExp(`ClickHouse shard ${last} of ${last} \\(`));
    } finally {
      cluster('start', String(last));
    }
    const reopened = await openClickHouseTables({ urls: gate.urls, table: `${prefix}_stopped` });
    opened.push(reopened);
    for (const t of [tables, reopened]) {
      const s = await t.status();
      expect(s.complete).toBe(false);
      await expect(t.finish()).rejects.toThrow(/did not complete/);
      await expect(t.pairs().next()).rejects.toThrow(/not complete/);
      await expect(t.query(fps[0]!)).rejects.toThrow(/not complete/);
    }
  });
});
