// Builds the browser example into build/examples/browser: the page's own files from examples/browser plus the
// built library (dist/index.mjs, exactly as published) as lib/simhash-wasm.mjs, with the WebAssembly module it
// imports beside it (dist/wasm.mjs as lib/wasm.mjs). No bundler: the page loads it with a plain
// `<script type="module">` and a module Web Worker, as a user would.
//   node scripts/build-examples.mjs [--out dir]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'examples/browser');
const outArg = process.argv.indexOf('--out');
const out = outArg >= 0 ? path.resolve(process.argv[outArg + 1] ?? '') : path.join(root, 'build/examples/browser');
const library = path.join(root, 'dist/index.mjs');

if (!fs.existsSync(library)) {
  console.error('build-examples: dist/index.mjs is missing; run "npm run build" first');
  process.exit(1);
}
// A stale dist would make the page show old behaviour; say so rather than fail (dist may be intentionally pinned).
const newestSource = Math.max(
  ...fs
    .readdirSync(path.join(root, 'src'), { recursive: true })
    .map((f) => fs.statSync(path.join(root, 'src', f)).mtimeMs),
);
if (newestSource > fs.statSync(library).mtimeMs) {
  console.warn(
    'build-examples: warning: src/ is newer than dist/index.mjs; run "npm run build" to refresh the library',
  );
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'lib'), { recursive: true });
const copied = [];
for (const name of fs.readdirSync(source)) {
  if (!/\.(html|js|css|svg|png|ico|txt)$/.test(name)) continue;
  fs.copyFileSync(path.join(source, name), path.join(out, name));
  copied.push(name);
}
fs.copyFileSync(library, path.join(out, 'lib/simhash-wasm.mjs'));
fs.copyFileSync(path.join(root, 'dist/wasm.mjs'), path.join(out, 'lib/wasm.mjs'));
// hyparquet (a devDependency here; pure ES modules, no dependencies of its own), which the page loads only when a
// Parquet table is dropped.
const hyparquet = path.join(root, 'node_modules/hyparquet/src');
fs.cpSync(hyparquet, path.join(out, 'lib/hyparquet'), { recursive: true, filter: (f) => !f.endsWith('.d.ts') });
// zstddec (a devDependency here; one ES module with its WebAssembly inline), loaded only for a table with
// Zstandard pages.
fs.copyFileSync(path.join(root, 'node_modules/zstddec/dist/zstddec.mjs'), path.join(out, 'lib/zstddec.mjs'));
console.log(
  `build-examples: ${path.relative(root, out)}/ ← ${copied.join(', ')} + lib/simhash-wasm.mjs and lib/wasm.mjs (dist/), lib/hyparquet/, lib/zstddec.mjs`,
);
console.log('serve it with: npm run serve:examples');
