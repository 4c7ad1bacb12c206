// A real-text near-duplicate corpus for the peer benchmark (bench/peers.bench.ts): ~21 MB of real text cut into
// mail-sized documents (1–20 KB, log-uniform), each written 10 times with seeded word edits, shuffled: ~210 MB,
// the shape of issue 12's "209 MB of real mail (10 edited copies of each message)". Generated into /tmp (or
// SIMHASH_REAL_CORPUS_DIR), never committed; rebuilt only when its parameters change.
//
// Sources (read in this order, each up to its share of the source bytes; all were on the Debian 12 machine):
// - the bundled texts: data/sample/licenses.jsonl, data/eval/licenses.jsonl (English licence and copyright texts),
//   data/eval/rbe-zh.jsonl and data/eval/messages-zh.jsonl (Chinese): ≤ 30 %;
// - /usr/share/doc/*: changelogs (Debian and upstream), NEWS, README, *.txt, *.md, *.rst, gzipped or not, the first
//   256 KB of each, never the copyright files (they are the bundled sample already): 45 %;
// - man pages under /usr/share/man, roff stripped to text (bench/roff-text.ts): English (man1–man9) 17 %, the
//   other languages (de, fr, es, pl, ru, ja, zh_CN, ...) 8 %;
// - then whatever of /usr/share/doc and the man pages is left, if the shares fell short.
// Files are read in a seeded shuffled order (not alphabetical), byte-identical files and documents are kept once.
// Natural near-duplicates among the sources remain (licence variants, changelogs of one source package): pairs
// found beyond the planted ones are not necessarily false.
//
// Edits: each copy gets its own rate, uniform in [1 %, 3 %] of its words; an edited word is replaced by another
// word of the same document, gets one inserted after it, or is deleted (a third each). Han, kana and hangul
// characters count as words, so Chinese and Japanese text is edited too.
//
// Files: docs.bin ([u32 LE byte length][UTF-8] per document), groups.bin (u32 per document: its source document;
// the planted near-duplicates are the pairs within a group), manifest.json.
// Alone: `npx tsx bench/real-corpus.ts` (SIMHASH_REAL_SOURCE_MB=21, SIMHASH_REAL_COPIES=10).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { roffToText } from './roff-text.js';

export interface RealCorpusOptions {
  /** Bytes of distinct source text before copying (default 21e6). */
  sourceBytes?: number;
  /** Edited copies per source document (default 10). */
  copies?: number;
  seed?: number;
  dir?: string;
}

export interface RealCorpusManifest {
  version: number;
  sourceBytes: number;
  copies: number;
  seed: number;
  documents: number;
  sourceDocuments: number;
  bytes: number;
  sources: Record<string, { files: number; documents: number; bytes: number }>;
}

export interface RealCorpus {
  dir: string;
  docsFile: string;
  groupsFile: string;
  manifest: RealCorpusManifest;
}

const VERSION = 2;
const MIN_DOC = 1024;
const MAX_DOC = 20 * 1024;
const FILE_CAP = 256 * 1024;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function walk(dir: string, out: string[] = []): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's text (gunzipped), or undefined when it is not UTF-8 text. */
function readText(file: string): string | undefined {
  try {
    let bytes: Uint8Array = fs.readFileSync(file);
    if (file.endsWith('.gz')) bytes = zlib.gunzipSync(bytes);
    if (bytes.includes(0)) return undefined;
    return utf8.decode(bytes).slice(0, FILE_CAP).replace(/\r\n?/g, '\n');
  } catch {
    return undefined; // binary, not UTF-8, unreadable
  }
}

interface Source {
  name: string;
  share: number;
  /** Texts, each a sequence of paragraphs (a file, or the records of a JSONL file). */
  texts(): Iterable<string[]>;
}

function paragraphs(text: string): string[] {
  return text.split(/\n[ \t]*\n/).filter((p) => p.trim());
}

function* jsonlTexts(files: string[]): Iterable<string[]> {
  for (const file of files) {
    const records = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { text: string }).text);
    yield records;
  }
}

function* fileTexts(files: string[], convert: (text: string) => string): Iterable<string[]> {
  const seen = new Set<string>();
  for (const file of files) {
    const text = readText(file);
    if (!text) continue;
    const digest = crypto.createHash('sha1').update(text).digest('hex');
    if (seen.has(digest)) continue;
    seen.add(digest);
    yield paragraphs(convert(text));
  }
}

function sources(random: () => number): Source[] {
  const repo = new URL('..', import.meta.url).pathname;
  const docFiles = shuffle(
    walk('/usr/share/doc').filter((f) => {
      const base = path.basename(f).toLowerCase();
      if (base.startsWith('copyright')) return false;
      return /^(changelog|news|readme)|\.(txt|md|rst)(\.gz)?$/.test(base);
    }),
    random,
  );
  const manFiles = walk('/usr/share/man').filter((f) => /\.\d\w*(\.gz)?$/.test(f));
  const english = shuffle(
    manFiles.filter((f) => /^\/usr\/share\/man\/man\d/.test(f)),
    random,
  );
  const other = shuffle(
    manFiles.filter((f) => !/^\/usr\/share\/man\/man\d/.test(f)),
    random,
  );
  const bundled = [
    'data/sample/licenses.jsonl',
    'data/eval/licenses.jsonl',
    'data/eval/rbe-zh.jsonl',
    'data/eval/messages-zh.jsonl',
  ].map((f) => path.join(repo, f));
  return [
    { name: 'bundled data/sample, data/eval', share: 0.3, texts: () => jsonlTexts(bundled) },
    { name: '/usr/share/doc', share: 0.45, texts: () => fileTexts(docFiles, (t) => t) },
    { name: 'man pages (English)', share: 0.17, texts: () => fileTexts(english, roffToText) },
    { name: 'man pages (other languages)', share: 0.08, texts: () => fileTexts(other, roffToText) },
  ];
}

/** Cuts a sequence of paragraphs into documents of a drawn size in [MIN_DOC, MAX_DOC] bytes. */
function* documentsOf(parts: string[], random: () => number): Iterable<string> {
  const target = () => Math.exp(Math.log(MIN_DOC) + random() * Math.log(MAX_DOC / MIN_DOC));
  let doc = '';
  let size = 0;
  let want = target();
  const pieces: string[] = [];
  for (const p of parts) {
    // Paragraphs larger than a document are cut at line ends, then anywhere.
    if (Buffer.byteLength(p) <= MAX_DOC / 2) pieces.push(p);
    else for (const line of p.match(/[^\n]{1,4000}\n?/g) ?? []) pieces.push(line);
  }
  for (const piece of pieces) {
    const bytes = Buffer.byteLength(piece);
    if (size > 0 && size + bytes > MAX_DOC) {
      if (size >= MIN_DOC) yield doc;
      doc = '';
      size = 0;
      want = target();
    }
    doc += (size ? '\n\n' : '') + piece;
    size += bytes + 2;
    if (size >= want) {
      yield doc;
      doc = '';
      size = 0;
      want = target();
    }
  }
  if (size >= MIN_DOC) yield doc;
}

const WORD =
  /\s+|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const CJK = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]$/u;

/** One edited copy: each word with probability `rate` replaced, followed by an inserted word, or deleted. */
function edit(tokens: string[], words: number[], rate: number, random: () => number): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (/^\s/.test(t) || random() >= rate) {
      out += t;
      continue;
    }
    const other = tokens[words[Math.floor(random() * words.length)]!]!;
    const op = random();
    if (op < 1 / 3) out += other;
    else if (op < 2 / 3) out += t + (CJK.test(t) ? '' : ' ') + other;
    // else: deleted
  }
  return out;
}

export function buildRealCorpus(options: RealCorpusOptions = {}): RealCorpus {
  const sourceBytes = options.sourceBytes ?? 21e6;
  const copies = options.copies ?? 10;
  const seed = options.seed ?? 20261201;
  const dir = options.dir ?? process.env.SIMHASH_REAL_CORPUS_DIR ?? path.join(os.tmpdir(), 'simhash-real-corpus');
  const docsFile = path.join(dir, 'docs.bin');
  const groupsFile = path.join(dir, 'groups.bin');
  const manifestFile = path.join(dir, 'manifest.json');
  try {
    const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as RealCorpusManifest;
    if (m.version === VERSION && m.sourceBytes === sourceBytes && m.copies === copies && m.seed === seed) {
      if (fs.existsSync(docsFile) && fs.existsSync(groupsFile)) return { dir, docsFile, groupsFile, manifest: m };
    }
  } catch {
    // no corpus yet
  }

  const random = mulberry32(seed);
  const originals: string[] = [];
  const seen = new Set<string>();
  const stats: RealCorpusManifest['sources'] = {};
  let total = 0;
  const all = sources(random);
  const take = (source: Source, budget: number, iterator: Iterator<string[]>) => {
    const s = (stats[source.name] ??= { files: 0, documents: 0, bytes: 0 });
    let used = 0;
    while (used < budget && total < sourceBytes) {
      const next = iterator.next();
      if (next.done) return;
      s.files++;
      for (const doc of documentsOf(next.value, random)) {
        if (used >= budget || total >= sourceBytes) break;
        if (seen.has(doc)) continue;
        seen.add(doc);
        const bytes = Buffer.byteLength(doc);
        originals.push(doc);
        s.documents++;
        s.bytes += bytes;
        used += bytes;
        total += bytes;
      }
    }
  };
  const iterators = all.map((s) => s.texts()[Symbol.iterator]());
  all.forEach((s, i) => take(s, s.share * sourceBytes, iterators[i]!));
  for (let i = 1; i < all.length && total < sourceBytes; i++) take(all[i]!, Infinity, iterators[i]!);

  // Copies, shuffled; each written as soon as its place is known would need them all in memory anyway.
  const order = shuffle(
    Array.from({ length: originals.length * copies }, (_, i) => i),
    random,
  );
  const tokenized = originals.map((d) => {
    const tokens = d.match(WORD) ?? [];
    const words = tokens.flatMap((t, i) => (/^\s/.test(t) ? [] : [i]));
    return { tokens, words };
  });
  const rates = Array.from({ length: originals.length * copies }, () => 0.01 + 0.02 * random());
  fs.mkdirSync(dir, { recursive: true });
  const out = fs.openSync(docsFile + '.tmp', 'w');
  const groups = new Uint32Array(order.length);
  let bytes = 0;
  const batch: Buffer[] = [];
  const flush = () => {
    fs.writeSync(out, Buffer.concat(batch));
    batch.length = 0;
  };
  order.forEach((copy, i) => {
    const source = Math.floor(copy / copies);
    groups[i] = source;
    const { tokens, words } = tokenized[source]!;
    const text = Buffer.from(edit(tokens, words, rates[copy]!, random));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(text.length);
    batch.push(length, text);
    bytes += text.length;
    if (batch.length >= 2048) flush();
  });
  flush();
  fs.closeSync(out);
  fs.renameSync(docsFile + '.tmp', docsFile);
  fs.writeFileSync(groupsFile, groups);
  const manifest: RealCorpusManifest = {
    version: VERSION,
    sourceBytes,
    copies,
    seed,
    documents: order.length,
    sourceDocuments: originals.length,
    bytes,
    sources: stats,
  };
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
  return { dir, docsFile, groupsFile, manifest };
}

/** The corpus's documents as strings and each document's group. */
export function readRealCorpus(corpus: RealCorpus): { texts: string[]; groups: Uint32Array } {
  const data = fs.readFileSync(corpus.docsFile);
  const texts: string[] = [];
  for (let at = 0; at < data.length; ) {
    const n = data.readUInt32LE(at);
    texts.push(data.toString('utf8', at + 4, at + 4 + n));
    at += 4 + n;
  }
  const raw = fs.readFileSync(corpus.groupsFile);
  const groups = new Uint32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  if (groups.length !== texts.length)
    throw new Error(`${corpus.groupsFile}: ${groups.length} groups for ${texts.length} documents`);
  return { texts, groups };
}

export function realCorpusFromEnv(): RealCorpus {
  return buildRealCorpus({
    sourceBytes: Number(process.env.SIMHASH_REAL_SOURCE_MB ?? 21) * 1e6,
    copies: Number(process.env.SIMHASH_REAL_COPIES ?? 10),
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = performance.now();
  const corpus = realCorpusFromEnv();
  console.log(JSON.stringify(corpus.manifest, null, 2));
  console.log(`${corpus.dir} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
