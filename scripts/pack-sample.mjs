// Puts the bundled sample into dist/ for the published package (dist/sample/licenses.jsonl.gz, gzip level 9,
// 0.5 MB for the 3.2 MB of data/sample/licenses.jsonl), where `simhash-wasm dedup --sample` reads it: the CLI reads
// gzip by its first bytes. Run by `npm run build`.
import fs from 'node:fs';
import zlib from 'node:zlib';

const root = new URL('..', import.meta.url);
const from = new URL('data/sample/licenses.jsonl', root);
const to = new URL('dist/sample/licenses.jsonl.gz', root);
fs.mkdirSync(new URL('.', to), { recursive: true });
// Node writes no time stamp into the gzip header: the same bytes on every build.
fs.writeFileSync(to, zlib.gzipSync(fs.readFileSync(from), { level: 9 }));
