// Parquet tables in and out: fixtures written by DuckDB (a Parquet writer independent of the hyparquet reader and
// hyparquet-writer under test), with several row groups, Zstandard and Snappy pages, NULL texts and columns of
// several types; the CLI's outputs read back by DuckDB and compared with the rows the library's dedup() keeps.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zlibZstd } from '../../src/cli/compression.js';
import { dedup } from '../../src/dedup/dedup.js';
import { init } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';
import { runCli } from './run.js';

let dir: string;
let db: DuckDBConnection;
beforeAll(async () => {
  await init();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-parquet-'));
  db = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Row {
  id: string;
  text: string | null;
  n: number;
  big: bigint;
  x: number;
  flag: boolean;
}

/** Seeded rows: groups of edited copies spread over the table, and a NULL text now and then. */
function rows(seed: number, groups: number): Row[] {
  const next = rng(seed);
  const words = Array.from({ length: 1500 }, (_, i) => `pq${i.toString(36)}`);
  const texts: Array<string | null> = [];
  for (let g = 0; g < groups; g++) {
    const base = Array.from({ length: 35 }, () => words[Math.floor(next() * words.length)]!);
    for (let c = 0, m = 1 + Math.floor(next() * 4); c < m; c++) {
      const t = base.slice();
      if (c > 0) t[Math.floor(next() * t.length)] = 'changed';
      texts.push(t.join(' '));
    }
    if (next() < 0.1) texts.push(null);
  }
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [texts[i], texts[j]] = [texts[j]!, texts[i]!];
  }
  return texts.map((text, i) => ({
    id: `row${i}`,
    text,
    n: i,
    big: BigInt(i) * 10_000_000_000n,
    x: i / 4,
    flag: i % 3 === 0,
  }));
}

/** Writes rows with DuckDB: a JSON Lines file read with explicit column types, copied to Parquet. */
async function writeTable(name: string, data: Row[], options: string): Promise<string> {
  const json = path.join(dir, `${name}.jsonl`);
  fs.writeFileSync(json, data.map((r) => JSON.stringify({ ...r, big: r.big.toString() })).join('\n'));
  const file = path.join(dir, `${name}.parquet`);
  await db.run(
    `COPY (SELECT * FROM read_json('${json}', columns = {id: 'VARCHAR', text: 'VARCHAR', n: 'INTEGER', big: 'BIGINT', x: 'DOUBLE', flag: 'BOOLEAN'})) TO '${file}' (FORMAT parquet, ${options})`,
  );
  return file;
}

async function readTable(file: string): Promise<{ columns: string[]; types: string[]; rows: unknown[][] }> {
  const r = await db.runAndReadAll(`SELECT * FROM '${file}'`);
  const d = await db.runAndReadAll(`DESCRIBE SELECT * FROM '${file}'`);
  return { columns: r.columnNames(), types: d.getRows().map((x) => String(x[1])), rows: r.getRows() };
}

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

const asRow = (r: Row): unknown[] => [r.id, r.text, r.n, r.big, r.x, r.flag];

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('Parquet tables', () => {
  for (const codec of ['zstd', 'snappy']) {
    it(`reads the text column row group by row group (${codec}); --output keeps the schema and the kept rows`, async () => {
      const data = rows(codec === 'zstd' ? 1 : 2, 150);
      const file = await writeTable(`t-${codec}`, data, `ROW_GROUP_SIZE 64, COMPRESSION ${codec}`);
      const docs = data.filter((r) => r.text !== null);
      const lib = dedup(docs.map((r) => r.text!));
      const kept = docs.filter((_, i) => lib.duplicateOf[i] === -1);
      expect(kept.length).toBeLessThan(docs.length * 0.8);
      // Rows with a NULL text are no document, so no duplicate: --output passes them through in their places.
      const keptRows = data.filter((r) => r.text === null || kept.includes(r));
      expect(keptRows.length).toBeGreaterThan(kept.length);

      const listed = runCli(['dedup', file]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toMatch(/rows without a string in column "text" skipped/);
      const out = path.join(dir, `kept-${codec}.parquet`);
      const r = runCli(['dedup', file, '--output', out]);
      expect(r.code, r.stderr).toBe(0);
      const got = await readTable(out);
      const input = await readTable(file);
      expect(got.columns).toEqual(input.columns);
      expect(got.types).toEqual(input.types);
      expect(got.rows).toEqual(keptRows.map(asRow));
    });
  }

  it('--removed and --annotate add cluster and duplicate_of columns', async () => {
    const data = rows(3, 80);
    const file = await writeTable('annotated', data, 'ROW_GROUP_SIZE 50');
    const docs = data.filter((r) => r.text !== null);
    const lib = dedup(
      docs.map((r) => r.text!),
      { keep: 'longest' },
    );
    const notes = (i: number) => [
      docs[lib.clusterOf[i]!]!.id,
      lib.duplicateOf[i] === -1 ? null : docs[lib.duplicateOf[i]!]!.id,
    ];
    const removed = path.join(dir, 'removed.parquet');
    const all = path.join(dir, 'all.parquet');
    expect(runCli(['dedup', file, '--removed', removed, '--keep', 'longest']).code).toBe(0);
    expect(runCli(['dedup', file, '--output', all, '--annotate', '--keep', 'longest']).code).toBe(0);
    const gone = await readTable(removed);
    expect(gone.columns.slice(-2)).toEqual(['cluster', 'duplicate_of']);
    const dropped = docs.map((_, i) => i).filter((i) => lib.duplicateOf[i] !== -1);
    expect(gone.rows).toEqual(dropped.map((i) => [...asRow(docs[i]!), ...notes(i)]));
    const every = await readTable(all);
    // Every row, those with a NULL text annotated with two NULLs.
    expect(every.rows).toEqual(
      data.map((d) => (d.text === null ? [...asRow(d), null, null] : [...asRow(d), ...notes(docs.indexOf(d))])),
    );
  });

  it('a table with a cluster column is not annotated; --id-field naming no column is reported', async () => {
    const data = rows(5, 10);
    const file = await writeTable('has-cluster', data, 'ROW_GROUP_SIZE 8');
    // DuckDB renames a column: the table's "n" becomes "cluster".
    const renamed = path.join(dir, 'has-cluster-renamed.parquet');
    await db.run(`COPY (SELECT * RENAME (n AS cluster) FROM '${file}') TO '${renamed}' (FORMAT parquet)`);
    const out = path.join(dir, 'has-cluster.out.parquet');
    for (const args of [
      ['--output', out, '--annotate'],
      ['--removed', out],
    ]) {
      const r = runCli(['dedup', renamed, ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`${renamed}: the table has a column "cluster" already; annotating would repeat it`);
      expect(fs.existsSync(out)).toBe(false);
    }
    const missing = runCli(['dedup', file, '--id-field', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `${file}: no column "nope" in the table ("id", "text", "n", "big", "x", "flag"): not read (--id-field names the id column)`,
    );
  });

  it('--keep longest measures UTF-8 bytes, as for every other format', async () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma';
    // Longer in UTF-8 bytes, shorter in UTF-16 units.
    const data = rows(6, 1).slice(0, 2);
    data[0] = { ...data[0]!, id: 'ascii', text: `${words} eeeeee` };
    data[1] = { ...data[1]!, id: 'accented', text: `${words} ééééé` };
    const file = await writeTable('keep-bytes', data, 'ROW_GROUP_SIZE 8');
    const out = path.join(dir, 'keep-bytes.out.parquet');
    const r = runCli(['dedup', file, '--keep', 'longest', '--output', out]);
    expect(r.code, r.stderr).toBe(0);
    expect((await readTable(out)).rows.map((row) => row[0])).toEqual(['accented']);
  });

  it('a damaged Zstandard page fails the run with its error: exit 1, nothing written', async () => {
    // One row group, each column's page one Zstandard frame (DuckDB writes a frame per page), found by its magic
    // bytes. Node's own decoder reads them from 22.15 on, zstddec before.
    const data = rows(7, 60);
    const file = await writeTable('damaged', data, 'ROW_GROUP_SIZE 100000, COMPRESSION zstd');
    const bytes = fs.readFileSync(file);
    // The frames before the footer (its length is in the last 8 bytes, before "PAR1"), damaged clear of it.
    const footer = bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8);
    const frames: number[] = [];
    for (let at = bytes.indexOf(ZSTD_MAGIC); at >= 0 && at + 76 < footer; at = bytes.indexOf(ZSTD_MAGIC, at + 1))
      frames.push(at);
    expect(frames.length).toBeGreaterThan(1);
    const out = path.join(dir, 'damaged.out.parquet');
    for (const [name, damage] of [
      ['magic', (b: Buffer, at: number) => b.fill(0, at, at + 4)],
      ['body', (b: Buffer, at: number) => b.fill(0xff, at + 12, at + 76)],
    ] as const) {
      for (const at of frames) {
        const copy = Buffer.from(bytes);
        damage(copy, at);
        const broken = path.join(dir, `damaged-${name}.parquet`);
        fs.writeFileSync(broken, copy);
        const r = runCli(['dedup', broken, '--output', out]);
        // A frame damaged in its body may decode to other bytes of the right length (DuckDB writes no frame
        // checksums): then the page's decoder fails on them, or, in an id or text, the run reads other values.
        if (r.code === 0 && name === 'body') continue;
        expect(r.code, `${name} at ${at}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toMatch(
          new RegExp(
            `^simhash-wasm: ${broken}: row group 0 \\(rows 0 to ${data.length - 1}\\) cannot be read, the table is damaged: .+\n$`,
          ),
        );
        expect(fs.existsSync(out)).toBe(false);
        // Before Node 22.15 zstddec decodes the pages (fzstd, the fallback, says "invalid zstd data").
        if (name === 'magic' && !zlibZstd.zstdDecompressSync)
          expect(r.stderr).toMatch(/a Zstandard page gave 0 bytes where its header says \d+\n$/);
      }
    }
    // A table cut short: its footer is not where its last bytes say.
    const cut = path.join(dir, 'damaged-cut.parquet');
    fs.writeFileSync(cut, Buffer.concat([bytes.subarray(0, 1000), bytes.subarray(bytes.length - 100)]));
    const r = runCli(['dedup', cut, '--output', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^simhash-wasm: ${cut}: not a readable Parquet table \\(its footer: .+\\)\n$`));
    expect(fs.existsSync(out)).toBe(false);
  });

  it('--field and --id-field name the columns; a missing column is reported; Parquet cannot mix with other inputs', async () => {
    const data = rows(4, 20);
    const file = await writeTable('named', data, 'ROW_GROUP_SIZE 8');
    const named = runCli(['dedup', file, '--field', 'id', '--id-field', 'n', '--all']);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout.trim().split('\n')).toHaveLength(data.length); // every id is distinct: clusters of one
    expect(JSON.parse(named.stdout.split('\n')[0]!).cluster).toBe(0);
    const missing = runCli(['dedup', file, '--field', 'body']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no column "body" in the table \("id", "text", "n", "big", "x", "flag"\)/);
    const mixed = runCli(['dedup', file, path.join(dir, 'named.jsonl')]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/is a Parquet table and .*named\.jsonl is not/);
    const flagged = runCli(['dedup', '--jsonl', file]);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toMatch(/is a Parquet table: drop --jsonl/);
    // A Parquet output is compressed inside: a .gz name would say otherwise.
    const gz = path.join(dir, 'named.parquet.gz');
    const packed = runCli(['dedup', file, '--output', gz]);
    expect(packed.code).toBe(2);
    expect(packed.stderr).toContain(`--output ${gz}: a Parquet table is compressed inside`);
    expect(fs.existsSync(gz)).toBe(false);
  });
});
