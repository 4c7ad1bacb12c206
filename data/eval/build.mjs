// Rebuilds the evaluation corpora in this folder from texts already on this machine (see SOURCES.md).
// Usage: node data/eval/build.mjs   (deterministic: same machine files in, same JSONL out)
import { readFileSync, writeFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const root = join(here, '..', '..');

function write(name, docs) {
  const body = docs.map((d) => JSON.stringify(d)).join('\n') + '\n';
  writeFileSync(join(here, name), body);
  console.log(`${name}: ${docs.length} documents, ${(Buffer.byteLength(body) / 1024).toFixed(0)} KiB`);
}

/** Keeps the first of each set of byte-identical texts: exact copies are found by any method and say nothing. */
function unique(docs) {
  const seen = new Set();
  return docs.filter((d) => {
    const h = createHash('sha1').update(d.text).digest('hex');
    if (seen.has(h)) return false;
    seen.add(h);
    return true;
  });
}

// --- licenses: Debian copyright files and the licence files of the npm packages in node_modules ---------------
function licenses() {
  const docs = [];
  const doc = '/usr/share/doc';
  for (const pkg of readdirSync(doc).sort()) {
    const path = join(doc, pkg, 'copyright');
    if (!existsSync(path)) continue;
    const size = statSync(path).size;
    if (size === 0 || size > 12_000) continue; // keeps the shipped file small; long files are the GPL anyway
    docs.push({ id: `debian:${pkg}/copyright`, text: readFileSync(path, 'utf8') });
  }
  const walk = (dir, depth) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory() && depth > 0 && name !== '.bin') walk(path, depth - 1);
      else if (st.isFile() && /^(licen[cs]e|copying)(\.md|\.txt)?$/i.test(name) && st.size <= 12_000) {
        docs.push({ id: `npm:${relative(join(root, 'node_modules'), path)}`, text: readFileSync(path, 'utf8') });
      }
    }
  };
  walk(join(root, 'node_modules'), 3);
  return unique(docs);
}

// --- Chinese: Rust by Example (zh), the copies shipped with the stable and nightly Rust toolchains ----------------
const entities = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
function htmlText(html) {
  const main = html.match(/<main>([\s\S]*?)<\/main>/);
  if (!main) return '';
  return main[1]
    .replace(/<pre[\s\S]*?<\/pre>/g, ' ') // code listings are English/Rust: keep the prose
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x?[0-9a-f]+|\w+);/gi, (m, e) =>
      e[0] === '#' ? String.fromCodePoint(parseInt(e.slice(1).replace(/^x/i, ''), e[1] === 'x' || e[1] === 'X' ? 16 : 10)) : entities[e] ?? m,
    )
    .replace(/[ \t]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
}

function htmlFiles(dir, prefix = '') {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...htmlFiles(path, prefix + name + '/'));
    else if (name.endsWith('.html') && !['print.html', '404.html', 'toc.html', 'index.html'].includes(prefix + name)) out.push(prefix + name);
  }
  return out;
}

/** A seeded generator (mulberry32), so the derived variants are the same on every run. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A derived near-duplicate: sentence-level edits (drop, repeat, swap with the next, or splice in a sentence from
 * another page) at a rate drawn from [0, 0.4], the kind of change a revised or re-posted page shows.
 */
function edited(text, donor, rand) {
  const split = (t) => t.split(/(?<=[。！？；\n])/u).filter((s) => s.trim() !== '');
  const sentences = split(text);
  const other = split(donor);
  const rate = rand() * 0.4;
  const out = [];
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i];
    if (rand() >= rate) { out.push(s); continue; }
    const op = Math.floor(rand() * 4);
    if (op === 0) continue;
    if (op === 1) out.push(s, s);
    else if (op === 2 && i + 1 < sentences.length) { out.push(sentences[i + 1], s); i++; }
    else out.push(s, other[Math.floor(rand() * other.length)] ?? '');
  }
  return out.join('');
}

function rustByExample(lang) {
  const toolchains = '/root/.rustup/toolchains';
  const stable = join(toolchains, 'stable-x86_64-unknown-linux-gnu/share/doc/rust/html/rust-by-example', lang);
  const nightly = join(toolchains, 'nightly-x86_64-unknown-linux-gnu/share/doc/rust/html/rust-by-example', lang);
  const docs = [];
  const pages = htmlFiles(stable);
  for (const page of pages) {
    const text = htmlText(readFileSync(join(stable, page), 'utf8'));
    if (text) docs.push({ id: `rbe-${lang}:stable/${page}`, text });
    const night = join(nightly, page);
    if (existsSync(night)) {
      const t = htmlText(readFileSync(night, 'utf8'));
      if (t) docs.push({ id: `rbe-${lang}:nightly/${page}`, text: t });
    }
  }
  const originals = unique(docs);
  const rand = random(7);
  const derived = [];
  for (const d of originals) {
    if (!d.id.includes(':stable/') || rand() >= 0.5) continue;
    const donor = originals[Math.floor(rand() * originals.length)];
    derived.push({ id: `${d.id}#edit`, text: edited(d.text, donor.text, rand) });
  }
  return unique([...originals, ...derived]);
}

// --- Chinese UI messages: the zh_CN translations in Debian's gettext catalogs (short texts) ---------------------
function moStrings(path) {
  const b = readFileSync(path);
  const le = b.readUInt32LE(0) === 0x950412de;
  const u32 = (o) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const n = u32(8), trans = u32(16);
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = u32(trans + i * 8), off = u32(trans + i * 8 + 4);
    const s = b.subarray(off, off + len).toString('utf8');
    for (const form of s.split('\0')) if (form && !form.startsWith('Project-Id-Version')) out.push(form);
  }
  return out;
}

function messages() {
  const dir = '/usr/share/locale/zh_CN/LC_MESSAGES';
  const docs = [];
  for (const pkg of ['gtk30', 'gtk20', 'coreutils', 'diffutils', 'grep', 'findutils', 'bfd', 'gas', 'gold', 'binutils']) {
    const path = join(dir, `${pkg}.mo`);
    if (!existsSync(path)) continue;
    moStrings(path).forEach((text, i) => docs.push({ id: `${pkg}.mo#${i}`, text }));
  }
  return unique(docs);
}

write('licenses.jsonl', licenses());
write('rbe-zh.jsonl', rustByExample('zh'));
write('messages-zh.jsonl', messages());
