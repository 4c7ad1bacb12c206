// The dedup job as users run it (issue 39): the CLI on a generated JSON Lines corpus (scripts/gen-jsonl.mjs, 200 MB;
// 1000 MB with SIMHASH_BENCH_LARGE=1), each row against its yardstick in the same rounds (alternating, median of 3
// wall times): --output against the same run without it, a .gz target against `--output - | gzip`, .gz input
// against `zcat FILE | simhash-wasm dedup -`, .zst
// against `zstd -dc FILE | …`, a Parquet table (written by DuckDB) in MB/s of text, and an incremental run of the
// last 5 % against one run over everything. Needs `npm run build`; gzip and zstd rows need those programs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './bench-row.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = path.join(root, 'dist/cli.mjs');
const ROUNDS = 3;

/** Wall seconds of a shell command (its output thrown away); throws when it fails. */
function wall(command: string): number {
  const t0 = performance.now();
  const r = spawnSync('sh', ['-c', `${command} > /dev/null`], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${command}: exit ${r.status}\n${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Median wall seconds of two commands run in turn, and the median of their per-round ratios. */
function paired(a: string, b: string, before?: () => void): { a: number; b: number; ratio: number } {
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    before?.();
    const ta = wall(a);
    before?.();
    const tb = wall(b);
    as.push(ta);
    bs.push(tb);
    ratios.push(ta / tb);
  }
  return { a: median(as), b: median(bs), ratio: median(ratios) };
}

const has = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
const s = (x: number) => `${x.toFixed(2)} s`;

export async function run(): Promise<BenchRow[]> {
  if (!fs.existsSync(cli)) throw new Error('dist/cli.mjs is missing: run "npm run build" first');
  const sizeMB = process.env.SIMHASH_BENCH_LARGE ? 1000 : 200;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-job-bench-'));
  const rows: BenchRow[] = [];
  try {
    const corpus = path.join(work, 'corpus.jsonl');
    const gen = spawnSync(process.execPath, [path.join(root, 'scripts/gen-jsonl.mjs'), corpus, String(sizeMB)]);
    if (gen.status !== 0) throw new Error(`gen-jsonl: ${gen.stderr}`);
    const mb = fs.statSync(corpus).size / 1e6;
    const run = `node ${cli} dedup --jsonl`;
    const out = path.join(work, 'kept.jsonl');
    const o = paired(`${run} ${corpus} --output ${out}`, `${run} ${corpus}`);
    rows.push({
      name: `dedup --output, ${mb.toFixed(0)} MB of JSON Lines (goal ≤ 1.10×)`,
      value: s(o.a),
      baseline: `without --output ${s(o.b)}`,
      ratio: `${o.ratio.toFixed(2)}×`,
    });
    if (has('gzip')) {
      const gz = path.join(work, 'kept.jsonl.gz');
      const w = paired(`${run} ${corpus} --output ${gz}`, `${run} ${corpus} --output - | gzip > ${gz}`);
      rows.push({
        name: '--output kept.jsonl.gz (gzipped on the thread pool)',
        value: s(w.a),
        baseline: `--output - piped into gzip ${s(w.b)}`,
        ratio: `${w.ratio.toFixed(2)}×`,
      });
      spawnSync('sh', ['-c', `gzip -c ${corpus} > ${corpus}.gz`]);
      const g = paired(`${run} ${corpus}.gz`, `zcat ${corpus}.gz | ${run} -`);
      rows.push({
        name: '.gz input (goal ≥ 80 % of the pipe: ratio ≤ 1.25×)',
        value: s(g.a),
        baseline: `zcat piped to dedup - ${s(g.b)}`,
        ratio: `${g.ratio.toFixed(2)}×`,
      });
    }
    if (has('zstd')) {
      spawnSync('sh', ['-c', `zstd -qc ${corpus} > ${corpus}.zst`]);
      const z = paired(`${run} ${corpus}.zst`, `zstd -dc ${corpus}.zst | ${run} -`);
      rows.push({
        name: '.zst input (goal ≥ 80 % of the pipe: ratio ≤ 1.25×)',
        value: s(z.a),
        baseline: `zstd -dc piped to dedup - ${s(z.b)}`,
        ratio: `${z.ratio.toFixed(2)}×`,
      });
    }
    const table = path.join(work, 'corpus.parquet');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    await db.run(
      `COPY (SELECT * FROM read_json('${corpus}', columns = {id: 'BIGINT', text: 'VARCHAR'}, maximum_object_size = 100000000)) TO '${table}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 10000)`,
    );
    const p = paired(`node ${cli} dedup ${table}`, `${run} ${corpus}`);
    rows.push({
      name: 'Parquet table (Zstandard, row groups of 10,000; goal ≥ 50 MB/s of text)',
      value: `${s(p.a)}, ${(mb / p.a).toFixed(0)} MB/s`,
      baseline: `the same text as JSON Lines ${s(p.b)}`,
      ratio: `${p.ratio.toFixed(2)}×`,
    });
    // Incremental: a state over the first 95 %, then the last 5 % against it, each round from that state.
    const lines = fs.readFileSync(corpus, 'utf8').split('\n').filter(Boolean);
    const cut = Math.floor(lines.length * 0.95);
    const older = path.join(work, 'older.jsonl');
    const newer = path.join(work, 'newer.jsonl');
    fs.writeFileSync(older, `${lines.slice(0, cut).join('\n')}\n`);
    fs.writeFileSync(newer, `${lines.slice(cut).join('\n')}\n`);
    const state = path.join(work, 'state');
    const base = path.join(work, 'state-older');
    wall(`${run} ${older} --state ${state}`);
    fs.cpSync(state, base, { recursive: true });
    // Each round from that state, its files hard-linked back: a run never writes into a file of the state (segments
    // are immutable, the manifest is replaced by a rename), so the links stay as they were.
    const restore = () => {
      fs.rmSync(state, { recursive: true, force: true });
      fs.mkdirSync(state);
      for (const f of fs.readdirSync(base)) fs.linkSync(path.join(base, f), path.join(state, f));
    };
    let bytes = 0;
    for (const f of fs.readdirSync(base)) bytes += fs.statSync(path.join(base, f)).size;
    const inc = paired(`${run} ${newer} --state ${state}`, `${run} ${corpus}`, restore);
    rows.push({
      name: `--state: the last 5 % against a state of the first 95 % (${(bytes / cut / 1e3).toFixed(2)} KB per document on disk; goal ≤ 0.10×)`,
      value: s(inc.a),
      baseline: `one run over all ${s(inc.b)}`,
      ratio: `${inc.ratio.toFixed(2)}×`,
    });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
