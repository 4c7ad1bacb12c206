// Rebuilds licenses.jsonl from licence texts installed on a Debian machine with this project's node_modules:
// node_modules/**/LICENSE*|LICENCE*|COPYING* files, and the paragraphs of /usr/share/doc/*/copyright files
// (Debian's machine-readable copyright format: each "Files:" or stand-alone "License:" paragraph becomes one
// document). Run from the repository root: node data/sample/build-sample.mjs. See SOURCES.md.
import fs from 'node:fs';
import path from 'node:path';

const MAX_DOC = 40_000; // characters: the full GPL-3 text fits, generated file lists do not
const MIN_DOC = 400; // shorter paragraphs are mostly one-line "Files: / Copyright:" stanzas
const MAX_TOTAL = 3_000_000;

const docs = new Map(); // id -> text

function walk(dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile() && /^(licen[cs]e|copying)/i.test(e.name)) out.push(p);
  }
}

const nodeFiles = [];
walk('node_modules', nodeFiles);
for (const file of nodeFiles) {
  const text = fs.readFileSync(file, 'utf8');
  if (text.length >= MIN_DOC && text.length <= MAX_DOC) docs.set(file.split(path.sep).join('/'), text);
}

// Binary packages built from one source share one copyright file: keep the first package (by name) per
// identical file, so the near-duplicates left are between different packages or paragraphs.
const seenFiles = new Set();
for (const pkg of fs.readdirSync('/usr/share/doc').sort()) {
  const file = `/usr/share/doc/${pkg}/copyright`;
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  if (seenFiles.has(text)) continue;
  seenFiles.add(text);
  const paragraphs = text.split(/\n[ \t]*\n/);
  paragraphs.forEach((para, i) => {
    const trimmed = para.trim();
    if (trimmed.length >= MIN_DOC && trimmed.length <= MAX_DOC) docs.set(`debian/${pkg}/copyright#${i + 1}`, trimmed);
  });
}

let ids = [...docs.keys()].sort();
let total = ids.reduce((s, id) => s + docs.get(id).length, 0);
// Over budget: drop the longest documents first (they are the fewest near-duplicates per byte).
if (total > MAX_TOTAL) {
  const bySize = [...ids].sort((a, b) => docs.get(b).length - docs.get(a).length);
  const dropped = new Set();
  for (const id of bySize) {
    if (total <= MAX_TOTAL) break;
    dropped.add(id);
    total -= docs.get(id).length;
  }
  ids = ids.filter((id) => !dropped.has(id));
}
const lines = ids.map((id) => JSON.stringify({ id, text: docs.get(id) }));
fs.writeFileSync('data/sample/licenses.jsonl', lines.join('\n') + '\n');
console.error(`${ids.length} documents, ${total} characters (${nodeFiles.length} node_modules licence files seen)`);
