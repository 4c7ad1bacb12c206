#!/usr/bin/env node
// The simhash-wasm command-line tool: `dedup` (near-duplicate clusters of a corpus) and `hash` (fingerprints).
// Inputs: files, directories (recursively), JSON Lines (--jsonl, --field) or stdin. Exit codes: 0 success,
// 1 error (including a bad input under --strict), 2 usage. Bad inputs are reported on stderr with file and line
// and skipped unless --strict. A progress bar goes to stderr only when stderr is a terminal.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { init } from '../runtime/wasm.js';
import { createSimHasher, type SimHasher } from '../fingerprint/fingerprint.js';
import { toHex } from '../fingerprint/bits.js';
import { clusters, defaultDedupK, findNearDuplicates, type ClusterMode } from '../dedup/dedup.js';
import { dropFeaturelessPairs, verifyPairs, type VerifyOptions } from '../dedup/verify-pairs.js';
import type { Bits, Preset, SimHashOptions, TokenizerName } from '../fingerprint/options.js';

const NAME = 'simhash-wasm';
// The sample sits in the repository's data/ folder (not in the published package): one level above dist/cli.mjs,
// two above src/cli/cli.ts when run from source.
function bundledSample(): string {
  const from = (up: string) => fileURLToPath(new URL(`${up}data/sample/licenses.jsonl`, import.meta.url));
  const bundled = from('../');
  return fs.existsSync(bundled) ? bundled : from('../../');
}

class UsageError extends Error {}
class InputError extends Error {}

const INPUT_HELP = `Inputs:
  FILE ...             files to read; a directory is read recursively (files in name order)
  -                    standard input (also the default when no input is given)
  --jsonl              inputs are JSON Lines: one document per line
  --field NAME         the JSON field holding the text (default "text")
  --id-field NAME      the JSON field naming the document (default "id"; else FILE:LINE)
  --lines              plain-text inputs hold one document per line
  --strict             stop at the first unreadable file or invalid line (exit 1); default: report and skip

Fingerprints:
  --bits 64|128        fingerprint width (default 64)
  --tokenizer NAME     whitespace, words, shingles (default), ngrams or segmenter
  --width N            words per shingle (default 3) or characters per n-gram (default 4)
  --preset NAME        default, or java (the Java reference implementation's fingerprints)`;

const HELP: Record<string, string> = {
  main: `Usage: ${NAME} <command> [options] [inputs]

Commands:
  dedup    find near-duplicate documents and print their clusters
  hash     print one fingerprint per document

Run "${NAME} <command> --help" for a command's options.
Exit codes: 0 success, 1 error, 2 usage.`,
  dedup: `Usage: ${NAME} dedup [options] [inputs]

Finds every pair of documents whose fingerprints differ in at most k bits and prints the clusters they form,
one per line (JSON Lines: {"cluster", "size", "members"}) or as CSV (document,cluster,size).

Dedup:
  --k N                largest Hamming distance of candidate pairs (default 12 at 64 bits, 21 at 128;
                       3 and 6 with --no-verify)
  --threshold J        keep a candidate pair when its texts' word 3-shingle Jaccard is at least J
                       (default 0.6)
  --no-verify          keep every pair within k (plain SimHash, no check on the texts)
  --mode MODE          connected (default: chains of near-duplicates form one cluster) or centre (each
                       cluster is a centre and the documents within k of it)
  --format FORMAT      jsonl (default) or csv
  --pairs              print the near-duplicate pairs ({"a", "b", "distance"}) instead of clusters
  --all                also print documents without near-duplicates (clusters of one)
  --summary            print a readable summary (counts, largest clusters, time) instead
  --sample             run on the bundled sample (${'data/sample/licenses.jsonl'}) and print a summary
  --threads 1|2        join on two threads (default 1)

${INPUT_HELP}
  -h, --help           this help`,
  hash: `Usage: ${NAME} hash [options] [inputs]

Prints one fingerprint per document: "HEX<tab>NAME" lines, or JSON Lines {"id", "fingerprint"} with --format jsonl.

  --format FORMAT      text (default) or jsonl

${INPUT_HELP}
  -h, --help           this help`,
};

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  jsonl: { type: 'boolean' },
  field: { type: 'string' },
  'id-field': { type: 'string' },
  lines: { type: 'boolean' },
  strict: { type: 'boolean' },
  bits: { type: 'string' },
  tokenizer: { type: 'string' },
  width: { type: 'string' },
  preset: { type: 'string' },
  format: { type: 'string' },
} as const;

const DEDUP_OPTIONS = {
  ...OPTIONS,
  k: { type: 'string' },
  mode: { type: 'string' },
  pairs: { type: 'boolean' },
  all: { type: 'boolean' },
  summary: { type: 'boolean' },
  sample: { type: 'boolean' },
  threads: { type: 'string' },
  threshold: { type: 'string' },
  'no-verify': { type: 'boolean' },
} as const;

interface Doc {
  name: string;
  text: string | Uint8Array;
}

interface ReadOptions {
  jsonl: boolean;
  field: string;
  idField: string;
  lines: boolean;
  strict: boolean;
}

// ---- progress on stderr (a terminal only) ----

class Progress {
  private readonly enabled = process.stderr.isTTY === true;
  private last = 0;
  update(label: string, done: number, total: number): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 30;
    const filled = total > 0 ? Math.round((done / total) * width) : width;
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${label} ${done}/${total}\x1b[K`,
    );
  }
  done(): void {
    if (this.enabled) process.stderr.write('\r\x1b[K');
  }
}

// ---- input ----

class Reporter {
  skipped = 0;
  constructor(private readonly strict: boolean) {}
  /** A bad input: fatal under --strict, else reported and skipped. */
  bad(message: string): void {
    if (this.strict) throw new InputError(message);
    this.skipped++;
    process.stderr.write(`${NAME}: skipped ${message}\n`);
  }
}

function listFiles(input: string, report: Reporter, out: string[]): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(input);
  } catch (error) {
    report.bad(`${input}: cannot read (${errorCode(error)})`);
    return;
  }
  if (!stat.isDirectory()) {
    out.push(input);
    return;
  }
  let entries: string[];
  try {
    entries = fs.readdirSync(input).sort();
  } catch (error) {
    report.bad(`${input}: cannot read directory (${errorCode(error)})`);
    return;
  }
  for (const name of entries) listFiles(path.join(input, name), report, out);
}

function errorCode(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ?? e.message ?? String(error);
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function parseJsonl(bytes: Uint8Array, source: string, o: ReadOptions, report: Reporter, docs: Doc[]): void {
  const lines = decoder.decode(bytes).split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${source}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      report.bad(`${where}: invalid JSON (${(error as Error).message})`);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      report.bad(`${where}: not a JSON object`);
      return;
    }
    const record = value as Record<string, unknown>;
    const text = record[o.field];
    if (typeof text !== 'string') {
      report.bad(`${where}: field ${JSON.stringify(o.field)} is ${text === undefined ? 'missing' : 'not a string'}`);
      return;
    }
    const id = record[o.idField];
    docs.push({ name: typeof id === 'string' || typeof id === 'number' ? String(id) : where, text });
  });
}

function addDocuments(bytes: Uint8Array, source: string, o: ReadOptions, report: Reporter, docs: Doc[]): void {
  if (o.jsonl) parseJsonl(bytes, source, o, report, docs);
  else if (o.lines) {
    decoder
      .decode(bytes)
      .split('\n')
      .forEach((line, i) => {
        if (line.trim() !== '') docs.push({ name: `${source}:${i + 1}`, text: line });
      });
  } else docs.push({ name: source, text: bytes });
}

function readInputs(
  inputs: string[],
  o: ReadOptions,
  report: Reporter,
  progress: Progress,
): { docs: Doc[]; bytes: number } {
  const docs: Doc[] = [];
  let bytes = 0;
  if (inputs.length === 0) {
    // Waiting on a terminal for documents nobody is typing would look like a hang.
    if (process.stdin.isTTY)
      throw new UsageError('no input: give files or directories, or pipe documents into standard input');
    inputs = ['-'];
  }
  const files: string[] = [];
  for (const input of inputs) {
    if (input === '-') files.push('-');
    else listFiles(input, report, files);
  }
  files.forEach((file, i) => {
    progress.update('reading', i, files.length);
    let data: Uint8Array;
    try {
      data = fs.readFileSync(file === '-' ? 0 : file);
    } catch (error) {
      report.bad(`${file === '-' ? 'standard input' : file}: cannot read (${errorCode(error)})`);
      return;
    }
    bytes += data.length;
    addDocuments(data, file, o, report, docs);
  });
  progress.update('reading', files.length, files.length);
  return { docs, bytes };
}

// ---- options ----

function intOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function choice<T extends string>(value: string | undefined, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

type Values = { [key: string]: string | boolean | undefined };

function hashOptions(v: Values): SimHashOptions & { bits: 64 | 128 } {
  const bits = choice(v.bits as string | undefined, 'bits', ['64', '128'], '64') === '128' ? 128 : 64;
  const o: SimHashOptions & { bits: 64 | 128 } = { bits };
  if (v.tokenizer !== undefined)
    o.tokenizer = choice(
      v.tokenizer as string,
      'tokenizer',
      ['whitespace', 'words', 'shingles', 'ngrams', 'segmenter'] as TokenizerName[],
      'shingles',
    );
  if (v.preset !== undefined)
    o.preset = choice(v.preset as string, 'preset', ['default', 'java'] as Preset[], 'default');
  if (v.width !== undefined) o.width = intOption(v.width as string, 'width', 3, 1, 64);
  return o;
}

function readOptions(v: Values): ReadOptions {
  if (v.field !== undefined && !v.jsonl) throw new UsageError('--field needs --jsonl');
  if (v['id-field'] !== undefined && !v.jsonl) throw new UsageError('--id-field needs --jsonl');
  if (v.lines && v.jsonl) throw new UsageError('--lines and --jsonl cannot be combined');
  return {
    jsonl: v.jsonl === true,
    field: (v.field as string | undefined) ?? 'text',
    idField: (v['id-field'] as string | undefined) ?? 'id',
    lines: v.lines === true,
    strict: v.strict === true,
  };
}

function hashAll(
  docs: Doc[],
  options: SimHashOptions & { bits: Bits },
  progress: Progress,
): { fps: BigUint64Array; featureCounts: Float64Array } {
  // Batches of about 4 MB: one WebAssembly call each, and a progress update between them.
  let hasher: SimHasher;
  try {
    hasher = createSimHasher(options);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const words = options.bits === 128 ? 2 : 1;
  const fps = new BigUint64Array(docs.length * words);
  const featureCounts = new Float64Array(docs.length);
  let start = 0;
  while (start < docs.length) {
    let end = start;
    let size = 0;
    while (end < docs.length && (end === start || size < 4 << 20)) size += docs[end++]!.text.length;
    const batch = hasher.hashManyDetailed(docs.slice(start, end).map((d) => d.text));
    fps.set(batch.fingerprints, start * words);
    featureCounts.set(batch.featureCounts, start);
    start = end;
    progress.update('hashing', start, docs.length);
  }
  return { fps, featureCounts };
}

// ---- output ----

/** The start of a document on one line, for the summary. */
function snippet(text: string | Uint8Array): string {
  const t = (typeof text === 'string' ? text : new TextDecoder().decode(text.subarray(0, 400)))
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > 90 ? `${t.slice(0, 90)}…` : t;
}

function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function write(text: string): Promise<void> {
  if (text === '') return;
  await new Promise<void>((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`;
}

// ---- commands ----

async function hashCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true });
  if (v.help) {
    await write(HELP.hash + '\n');
    return 0;
  }
  const format = choice(v.format, 'format', ['text', 'jsonl'] as const, 'text');
  const o = readOptions(v);
  const hashOpts = hashOptions(v);
  const report = new Reporter(o.strict);
  const progress = new Progress();
  await init();
  const { docs } = readInputs(positionals, o, report, progress);
  const { fps } = hashAll(docs, hashOpts, progress);
  progress.done();
  const words = hashOpts.bits === 128 ? 2 : 1;
  const out: string[] = [];
  docs.forEach((d, i) => {
    const fp = words === 2 ? (fps[i * 2 + 1]! << 64n) | fps[i * 2]! : fps[i]!;
    const hex = toHex(fp, hashOpts.bits);
    out.push(format === 'jsonl' ? JSON.stringify({ id: d.name, fingerprint: hex }) : `${hex}\t${d.name}`);
  });
  await write(out.length ? out.join('\n') + '\n' : '');
  return 0;
}

async function dedupCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseArgs({ args, options: DEDUP_OPTIONS, allowPositionals: true });
  if (v.help) {
    await write(HELP.dedup + '\n');
    return 0;
  }
  const t0 = performance.now();
  const format = choice(v.format, 'format', ['jsonl', 'csv'] as const, 'jsonl');
  const mode = choice(v.mode, 'mode', ['connected', 'centre'] as ClusterMode[], 'connected');
  const hashOpts = hashOptions(v);
  const verified = v['no-verify'] !== true;
  if (!verified && v.threshold !== undefined)
    throw new UsageError('--threshold checks pairs: drop --no-verify with it');
  const k = intOption(v.k, 'k', defaultDedupK(hashOpts.bits === 128 ? 128 : 64, verified), 0, hashOpts.bits);
  let verify: VerifyOptions | false = false;
  if (verified) {
    verify = {};
    if (v.threshold !== undefined) {
      const threshold = Number(v.threshold);
      if (!(threshold > 0 && threshold <= 1))
        throw new UsageError(`--threshold must be a number in (0, 1], got ${JSON.stringify(v.threshold)}`);
      verify = { threshold };
    }
  }
  const threads = intOption(v.threads, 'threads', 1, 1, 2) as 1 | 2;
  let o = readOptions(v);
  let inputs = positionals;
  const summary = v.summary === true || (v.sample === true && v.format === undefined && !v.pairs);
  if (v.sample) {
    if (positionals.length > 0) throw new UsageError('--sample reads the bundled sample: give no inputs with it');
    if (v.jsonl || v.lines) throw new UsageError('--sample is JSON Lines already: drop --jsonl / --lines');
    o = { ...o, jsonl: true };
    inputs = [bundledSample()];
    if (!fs.existsSync(inputs[0]!)) throw new InputError(`the bundled sample is missing: ${inputs[0]}`);
  }
  const report = new Reporter(o.strict);
  const progress = new Progress();
  await init();
  const { docs, bytes } = readInputs(inputs, o, report, progress);
  const t1 = performance.now();
  const { fps, featureCounts } = hashAll(docs, hashOpts, progress);
  const t2 = performance.now();
  progress.update('joining', 0, 1);
  const found =
    threads === 2
      ? await findNearDuplicates(fps, { k, bits: hashOpts.bits, threads: 2 })
      : findNearDuplicates(fps, { k, bits: hashOpts.bits });
  const t3 = performance.now();
  progress.update('verifying', 0, 1);
  const texts = docs.map((d) => d.text);
  const pairs = verify ? verifyPairs(texts, found, verify) : dropFeaturelessPairs(texts, found, featureCounts);
  const t3v = performance.now();
  const { clusterOf, count } = clusters(docs.length, pairs, { mode });
  const t4 = performance.now();
  progress.done();

  const members = new Map<number, number[]>();
  clusterOf.forEach((rep, i) => {
    let list = members.get(rep);
    if (!list) members.set(rep, (list = []));
    list.push(i);
  });
  const timing = `read ${ms(t1 - t0)}, hash ${ms(t2 - t1)}, join ${ms(t3 - t2)}, verify ${ms(t3v - t3)}, cluster ${ms(t4 - t3v)}, total ${ms(t4 - t0)}`;

  if (summary) {
    const groups = [...members.entries()]
      .filter(([, m]) => m.length > 1)
      .sort((x, y) => y[1].length - x[1].length || x[0] - y[0]);
    const inGroups = groups.reduce((s, [, m]) => s + m.length, 0);
    const lines = [
      `${docs.length} documents (${(bytes / 1e6).toFixed(1)} MB) from ${inputs.length === 1 ? inputs[0] : `${inputs.length} inputs`}` +
        (report.skipped ? `, ${report.skipped} skipped` : ''),
      `k = ${k}, ${hashOpts.bits}-bit fingerprints, ${verify ? `pairs verified at shingle Jaccard ≥ ${verify.threshold ?? 0.6}` : 'pairs not verified'}, ${mode} clusters`,
      `${found.a.length} candidate pairs within k, ${pairs.a.length} near-duplicate pairs; ${groups.length} clusters of 2 or more hold ${inGroups} documents; ${count} clusters in all`,
      ``,
      `Largest clusters:`,
    ];
    for (const [, m] of groups.slice(0, 10)) {
      const names = m.slice(0, 4).map((i) => docs[i]!.name);
      lines.push(`  ${String(m.length).padStart(5)} documents, e.g. ${names.join(', ')}${m.length > 4 ? ', …' : ''}`);
      lines.push(`        "${snippet(docs[m[0]!]!.text)}"`);
    }
    lines.push('', `Time: ${timing}`);
    await write(lines.join('\n') + '\n');
    return 0;
  }

  const out: string[] = [];
  if (v.pairs) {
    if (format === 'csv') out.push('a,b,distance');
    for (let i = 0; i < pairs.a.length; i++) {
      const a = docs[pairs.a[i]!]!.name;
      const b = docs[pairs.b[i]!]!.name;
      out.push(
        format === 'csv'
          ? `${csvField(a)},${csvField(b)},${pairs.distance[i]}`
          : JSON.stringify({ a, b, distance: pairs.distance[i] }),
      );
    }
  } else {
    if (format === 'csv') out.push('document,cluster,size');
    for (const [rep, m] of members) {
      if (m.length < 2 && !v.all) continue;
      const repName = docs[rep]!.name;
      if (format === 'csv') for (const i of m) out.push(`${csvField(docs[i]!.name)},${csvField(repName)},${m.length}`);
      else out.push(JSON.stringify({ cluster: repName, size: m.length, members: m.map((i) => docs[i]!.name) }));
    }
  }
  await write(out.length ? out.join('\n') + '\n' : '');
  if (process.stderr.isTTY) {
    process.stderr.write(`${docs.length} documents, ${pairs.a.length} pairs, ${count} clusters (${timing})\n`);
  }
  return 0;
}

/** Runs the tool on `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      const topic = command === 'help' ? rest[0] : undefined;
      if (topic !== undefined && !(topic in HELP && topic !== 'main'))
        throw new UsageError(`unknown command ${JSON.stringify(topic)}`);
      await write(HELP[topic ?? 'main'] + '\n');
      return command === undefined ? 2 : 0;
    }
    if (command === 'dedup') return await dedupCommand(rest);
    if (command === 'hash') return await hashCommand(rest);
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  } catch (error) {
    const e = error as Error & { code?: string };
    if (error instanceof UsageError || (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(
        `${NAME}: ${e.message}\nRun "${NAME} ${command === 'dedup' || command === 'hash' ? command + ' ' : ''}--help" for usage.\n`,
      );
      return 2;
    }
    if (error instanceof InputError) {
      process.stderr.write(`${NAME}: ${e.message}\n`);
      return 1;
    }
    if (e.code === 'EPIPE') return 0;
    process.stderr.write(`${NAME}: ${e.stack ?? e.message}\n`);
    return 1;
  }
}

function isEntry(): boolean {
  if (!isMainThread || process.argv[1] === undefined) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

// Runs only as the program itself: not when imported, nor in the join worker (which imports this bundle).
if (isEntry()) {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
  });
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
