// Puts the bundled sample into dist/ for the published package (dist/sample/licenses.jsonl.gz), where
// `simhash-wasm dedup --sample` reads it (the CLI reads gzip by its first bytes). It is the first 0.8 MB of whole
// lines of data/sample/licenses.jsonl (705 of its 2,662 documents, 0.14 MB gzipped), so that the package stays under
// its 1 MB budget (1.2 MB of them took it to 1.04 MB); run from the sources, the CLI reads the whole file. Run by `npm run build`.
import fs from 'node:fs';
import zlib from 'node:zlib';

const SAMPLE_BYTES = 800_000;

const root = new URL('..', import.meta.url);
const from = new URL('data/sample/licenses.jsonl', root);
const to = new URL('dist/sample/licenses.jsonl.gz', root);
const text = fs.readFileSync(from);
let end = 0;
while (end < text.length) {
  const next = text.indexOf(10, end);
  const lineEnd = next < 0 ? text.length : next + 1;
  if (lineEnd > SAMPLE_BYTES) break;
  end = lineEnd;
}
fs.mkdirSync(new URL('.', to), { recursive: true });
// Node writes no time stamp into the gzip header: the same bytes on every build.
fs.writeFileSync(to, zlib.gzipSync(text.subarray(0, end), { level: 9 }));
