// Prints the size of every file in dist/ (raw, gzip -9, brotli) and checks each shipped file against a budget.
// `node scripts/check-size.mjs` exits 1 when a file is over budget or missing (CI: `npm run size`); with --report it
// only prints. The whole package's budget (1 MB unpacked, what `npm pack` reports) is checked by test/e2e/dist.test.ts.
//
// Each budget is the size when the lean package landed plus about 15 % headroom: a mistake such as embedding the
// WebAssembly in an entry again, the CLI bundling its own copy of the library or internal types leaking into the
// declarations shows up at once. Earlier budgets and the sizes behind them are in bench/HISTORY.md.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const KB = 1024;
/** file → maximum raw and gzip bytes. */
export const BUDGETS = {
  // The library without its WebAssembly (187 KiB raw, 55 KiB gzip when the lean package landed; 220 KiB and 68 KiB
  // with the incremental state's directory and probing join and the join walked beside verification; 247 KiB and
  // 77 KiB with the probe join, the state's lock and the argument checks of the 2026-12-05 review).
  'dist/index.mjs': { raw: 272 * KB, gzip: 84 * KB },
  'dist/index.cjs': { raw: 272 * KB, gzip: 84 * KB },
  // Both builds, gzip then base64 (72 KiB), once for both entries.
  'dist/wasm.mjs': { raw: 84 * KB, gzip: 64 * KB },
  // Every export documented (59 KiB: most of it TSDoc, which editors show).
  'dist/index.d.cts': { raw: 68 * KB, gzip: 20 * KB },
  // The CLI imports ./index.mjs and ./clickhouse.mjs rather than copies (67 KiB; 86 KiB with the review's fixes of
  // 2026-12-05: FIFO and symlink targets, records passed through, the BOM, the state's lock and messages).
  'dist/cli.mjs': { raw: 96 * KB, gzip: 32 * KB },
  // simhash-wasm/clickhouse: no WebAssembly, and the client is the user's (28 KiB).
  'dist/clickhouse.mjs': { raw: 34 * KB, gzip: 11 * KB },
  'dist/clickhouse.cjs': { raw: 34 * KB, gzip: 11 * KB },
  'dist/clickhouse.d.cts': { raw: 20 * KB, gzip: 7 * KB },
  // The first 0.8 MB of data/sample/licenses.jsonl (scripts/pack-sample.mjs), 140 KiB: cut from 1.2 MB (194 KiB) so
  // that the whole package stays under its 1 MB.
  'dist/sample/licenses.jsonl.gz': { raw: 160 * KB, gzip: 160 * KB },
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
