// Prints the size of every file in dist/ (raw, gzip -9, brotli) and checks the shipped entry points against a
// budget. `node scripts/check-size.mjs` exits 1 when a file is over budget or missing (CI: `npm run size`);
// with --report it only prints (the build runs it that way).
//
// Budgets, against the sizes measured when the packaging landed (index.mjs 337 KiB raw / 88 KiB gzip, each .wasm
// 76-108 KiB raw / 18.5 KiB gzip, cli.mjs 18 KiB): roughly +35-50% headroom for kernels still to come, while
// a mistake such as embedding the WASM twice, the CLI bundling its own copy of the library, or the declarations'
// base64 literals shows up at once. gzip is what a browser downloads; raw size is what a bundler or Node parses.
// Issue 12 (verification and exact copies in WebAssembly: +4.5 KiB per build, embedded twice as base64) took
// index.* to 125 KiB gzip: their gzip budget was then 136 KiB. Issue 15's four-stream scans and batched index
// probes (+1.8 KiB per build) and the sampled join plan took them to 139 KiB: the budget was then 144 KiB. The SIMD
// build's block merge, the join walk's four-candidate steps and the shingle sort's exchange pass took index.cjs to
// 144.3 KiB: the budget was then 148 KiB. The weighted reducer's per-byte tables and the chunked hash entry points
// (+1.9 KiB per build; unrolled, since a loop over the eight tables ran at half the speed) took index.cjs to
// 148.5 KiB: the budget was then 152 KiB. The eight-stream scans (64-bit distances and count, 128-bit distances,
// count and collect: twice as fast from DRAM at 128 bits; +3.7 KiB raw per build) took index.cjs to 514 KiB raw
// and 150.9 KiB gzip: the raw budget is now 528 KiB; gzip stays at 152 KiB, still far below what a second copy of
// either build (+30 KiB as base64) would add. The scans' choice of memory layout (src/hamming/scan-layout.ts, a
// flag in each build; one stream ran 1.3-1.4x faster than the blocks from DRAM on an AMD EPYC VM) took index.cjs
// to 152.2 KiB gzip: the gzip budget is now 156 KiB. The pool's afternoon of 2026-12-02 (texts checked in one pass,
// a worker's chunk copied into WebAssembly at once, chunks that shrink, kept spare buffers, transferred copies for
// the join and the index, exact copies without hashing: TypeScript and its comments, +8 KiB raw) took index.cjs to
// 530 KiB raw and 156.2 KiB gzip: the budgets were then 540 KiB raw and 160 KiB gzip. The size band and the
// histogram bound took index.cjs to 541 KiB raw (159.5 KiB gzip), most of the TypeScript in it comments: the
// published JavaScript is now compiled without them (the declarations keep theirs), 460 KiB raw and 127.7 KiB gzip,
// and the budgets are 500 KiB raw and 140 KiB gzip, below what a second copy of a build would add.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const KB = 1024;
/** file → maximum raw and gzip bytes. */
export const BUDGETS = {
  // 510 KiB raw with the Deduplicator (incremental runs) and the keep rule: 540 KiB.
  'dist/index.mjs': { raw: 540 * KB, gzip: 140 * KB },
  'dist/index.cjs': { raw: 540 * KB, gzip: 140 * KB },
  // 52 KiB with the ClickHouse commands (sql, dedup --clickhouse), which import ./clickhouse.mjs rather than a copy;
  // 65 KiB with the deduplicated corpus (--output, --removed) and compressed inputs.
  'dist/cli.mjs': { raw: 96 * KB, gzip: 28 * KB },
  // simhash-wasm/clickhouse: 43 KiB raw / 13 KiB gzip when it landed; no WASM, the client is the user's.
  'dist/clickhouse.mjs': { raw: 64 * KB, gzip: 18 * KB },
  'dist/clickhouse.cjs': { raw: 64 * KB, gzip: 18 * KB },
  'dist/simhash.simd.wasm': { raw: 160 * KB, gzip: 28 * KB },
  'dist/simhash.scalar.wasm': { raw: 160 * KB, gzip: 28 * KB },
};

const reportOnly = process.argv.includes('--report');
const root = path.resolve(new URL('..', import.meta.url).pathname);
const dist = path.join(root, 'dist');

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else out.push(full);
  }
  return out;
}

function measure(file) {
  const bytes = fs.readFileSync(file);
  return {
    raw: bytes.length,
    gzip: zlib.gzipSync(bytes, { level: 9 }).length,
    brotli: zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

const kib = (n) => (n < KB ? `${n} B` : `${(n / KB).toFixed(1)} KiB`);

if (!fs.existsSync(dist)) {
  console.error('check-size: dist/ does not exist; run "npm run build" first');
  process.exit(1);
}

const rows = [];
const failures = [];
const totals = { raw: 0, gzip: 0, brotli: 0 };
for (const file of walk(dist).sort()) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const size = measure(file);
  for (const key of Object.keys(totals)) totals[key] += size[key];
  const budget = BUDGETS[rel];
  let verdict = '';
  if (budget) {
    const over = ['raw', 'gzip'].filter((key) => size[key] > budget[key]);
    verdict =
      over.length === 0
        ? `ok (budget ${kib(budget.raw)} / ${kib(budget.gzip)} gz)`
        : `OVER ${over.join(' and ')} budget`;
    for (const key of over) failures.push(`${rel}: ${key} ${size[key]} B > budget ${budget[key]} B`);
  }
  rows.push([rel, kib(size.raw), kib(size.gzip), kib(size.brotli), verdict]);
}
for (const rel of Object.keys(BUDGETS)) {
  if (!fs.existsSync(path.join(root, rel))) failures.push(`${rel}: missing`);
}
rows.push(['total', kib(totals.raw), kib(totals.gzip), kib(totals.brotli), '']);

const header = ['file', 'raw', 'gzip', 'brotli', 'budget'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) =>
  cells
    .map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
    .join('  ')
    .trimEnd();
console.log(line(header));
for (const row of rows) console.log(line(row));

if (failures.length > 0) {
  console.error(`\nsize budget ${reportOnly ? 'warnings' : 'exceeded'}:\n  ${failures.join('\n  ')}`);
  if (!reportOnly) process.exit(1);
}
