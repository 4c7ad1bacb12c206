#!/usr/bin/env node
// The simhash-wasm command-line tool: `dedup` (near-duplicate clusters of a corpus) and `hash` (fingerprints).
// Inputs (files, directories, JSON Lines, one document per line, stdin) are read as streams of any size
// (inputs.ts) and fingerprinted in worker threads (--threads); dedup runs on dedupStream, which keeps per document
// only its fingerprint and locator and reads the documents of candidate pairs again to verify them. Exit codes:
// 0 success, 1 error (no document read, or a bad input under --strict), 2 usage. Bad inputs are reported on
// stderr with file and line and skipped unless --strict. A progress bar goes to stderr only when it is a terminal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { init } from '../runtime/wasm.js';
import { toHex } from '../fingerprint/bits.js';
import { clusters, defaultDedupK, type ClusterMode, type DedupOptions, type VerifyOptions } from '../dedup/dedup.js';
import { jaccardSorted, shingleHashes } from '../dedup/shingle-jaccard.js';
import { dedupStream, type DedupStreamResult } from '../dedup/stream.js';
import { simhashStream } from '../dedup/stream-hash.js';
import { Corpus, type ReadOptions } from './inputs.js';
import type { ListOptions } from './sources.js';
import { AtomicFile, canWriteZstd, compressionOf, destination, outcome } from './atomic-file.js';
import {
  type DeduplicatedDocuments,
  type WriteCounts,
  keptCount,
  writeCorpus,
  writeParquetCorpus,
} from './corpus-writer.js';
import { Deduplicator } from '../dedup/deduplicator.js';
import { KEEP_RULES } from '../dedup/keep.js';
import { Output, csvField, escapeName, ms, snippet, write } from './output.js';
import { Progress } from './progress.js';
import { InputError, NAME, Reporter, UsageError } from './report.js';
import {
  choice,
  DEDUP_OPTIONS,
  HELP,
  hashOptions,
  intOption,
  OPTIONS,
  readOptions,
  threadsOption,
  type Values,
} from './usage.js';

// The sample ships in the package as dist/sample/licenses.jsonl.gz (scripts/pack-sample.mjs, beside dist/cli.mjs);
// run from the sources (tsx), it is the repository's data/sample/licenses.jsonl.
function bundledSample(): string {
  const packed = fileURLToPath(new URL('./sample/licenses.jsonl.gz', import.meta.url));
  return fs.existsSync(packed) ? packed : fileURLToPath(new URL('../../data/sample/licenses.jsonl', import.meta.url));
}

/** The package's version, from its package.json (one level above dist/cli.mjs, two above src/cli/cli.ts). */
function packageVersion(): string {
  for (const up of ['../package.json', '../../package.json']) {
    const file = fileURLToPath(new URL(up, import.meta.url));
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === NAME && typeof pkg.version === 'string') return pkg.version;
  }
  throw new Error('the package.json of simhash-wasm is missing');
}

function cores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

function noDocuments(report: Reporter): InputError {
  const why = [
    report.skipped ? `${report.skipped} skipped` : '',
    report.warnings ? `${report.warnings} warning${report.warnings === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  if (why.length === 0) return new InputError('no documents were read');
  // --quiet kept the messages off stderr: this one alone has to say why.
  if (report.isQuiet)
    return new InputError(
      `no documents were read (${why.join(', ')}: ${report.reasonCounts}; run without --quiet to see them)`,
    );
  return new InputError(`no documents were read (${why.join(', ')}: see above)`);
}

function fingerprintHex(fps: BigUint64Array, i: number, bits: 32 | 64 | 128): string {
  return toHex(bits === 128 ? (fps[i * 2 + 1]! << 64n) | fps[i * 2]! : fps[i]!, bits);
}

/** --format tsv: the fingerprint as UInt64 decimals, the columns of simhash-wasm/clickhouse (128 bits: low, high). */
function fingerprintWords(fps: BigUint64Array, i: number, bits: 32 | 64 | 128): string {
  return bits === 128 ? `${fps[i * 2]}\t${fps[i * 2 + 1]}` : String(fps[i]);
}

// ---- commands ----

async function hashCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true });
  if (v.help) {
    await write(HELP.hash + '\n');
    return 0;
  }
  const format = choice(v.format, 'format', ['text', 'jsonl', 'tsv'] as const, 'text');
  const o = readOptions(v);
  const hashOpts = hashOptions(v, 'hash');
  const threads = threadsOption(v, cores());
  const report = new Reporter(o.strict, v.quiet === true);
  const progress = new Progress(v.quiet === true);
  await init();
  const corpus = new Corpus(positionals, o, report, progress, false);
  const out = new Output();
  async function* texts(): AsyncGenerator<string | Uint8Array> {
    for await (const doc of corpus.documents()) yield doc.text;
  }
  try {
    for await (const batch of simhashStream(texts(), { ...hashOpts, threads })) {
      for (let j = 0; j < batch.featureCounts.length; j++) {
        const i = batch.first + j;
        if (format === 'tsv') {
          await out.line(`${i}\t${fingerprintWords(batch.fingerprints, j, hashOpts.bits)}`);
          continue;
        }
        const hex = fingerprintHex(batch.fingerprints, j, hashOpts.bits);
        await out.line(
          format === 'jsonl' ? `{"id":${corpus.nameJson(i)},"fingerprint":"${hex}"}` : `${hex}\t${corpus.nameText(i)}`,
        );
      }
    }
  } finally {
    corpus.close();
    progress.done();
  }
  await out.flush();
  if (corpus.count === 0) throw noDocuments(report);
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
  if (v['all-pairs'] === true && v.pairs !== true) throw new UsageError('--all-pairs prints pairs: add --pairs');
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
  const threads = threadsOption(v, cores());
  const keep = choice(v.keep, 'keep', KEEP_RULES, 'first');
  const writes = corpusTargetsOf(v);
  if (v.clickhouse !== undefined) {
    if (writes.output !== undefined || writes.removed !== undefined)
      throw new UsageError('--clickhouse prints pairs or clusters: drop --output / --removed');
    return dedupOnClickHouse(v, positionals, k, verified, threads);
  }
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
  const report = new Reporter(o.strict, v.quiet === true);
  const progress = new Progress(v.quiet === true);
  if (v.state !== undefined) {
    if (v.pairs || v.format !== undefined || v.all)
      throw new UsageError('--state prints what it drops: drop --pairs / --format / --all');
    if (keep !== 'first')
      throw new UsageError('--state keeps the first document of each cluster: what earlier runs kept stays kept');
    if (mode !== 'connected') throw new UsageError('--state forms connected clusters: drop --mode');
  }
  await init();
  // The state first: its lock (which also proves the directory writable) before any input is read or output
  // replaced, and the files it already holds, which this run does not read again.
  const state =
    v.state !== undefined ? await openState(v.state as string, { ...hashOpts, k, verify }, report) : undefined;
  const seen = { files: 0 };
  let corpus: Corpus;
  try {
    const read: ReadOptions & ListOptions =
      state && !o.jsonl && !o.lines && o.delimiter === null ? { ...o, recorded: recordedFiles(state, seen) } : o;
    corpus = new Corpus(inputs, { ...read, verify: verified }, report, progress, true);
    checkCorpusTargets(writes, corpus);
  } catch (error) {
    state?.close();
    throw error;
  }
  if (state !== undefined) {
    try {
      return await runWithState(state, v.state as string, corpus, writes, report, t0, threads, seen.files);
    } catch (error) {
      // A damaged shingle set is found only when its document is in a candidate pair, during the run. (By its
      // message: the library's StateError is not exported, and the CLI's bundle imports only what src/index.ts does.)
      if (error instanceof RangeError && error.message.startsWith('not a usable Deduplicator state: '))
        throw new InputError(`--state ${v.state as string}: ${error.message}`);
      throw error;
    } finally {
      state.close();
      corpus.close();
      progress.done();
    }
  }
  try {
    const result = await dedupStream(corpus.documents(), {
      ...hashOpts,
      k,
      mode,
      keep,
      verify,
      pairs: v['all-pairs'] === true ? 'all' : 'explain',
      threads,
      reread: corpus.reread,
      onProgress: (phase, done, total) => {
        if (phase !== 'hashing') progress.update(phase, done, total);
      },
    });
    progress.done();
    if (result.count === 0) throw noDocuments(report);
    const t1 = performance.now();
    const t = result.timings;
    const timing = `read and hash ${ms(t.hash)}, join ${ms(t.join)}, verify ${ms(t.verify)}, cluster ${ms(t.cluster)}, total ${ms(t1 - t0)}`;
    if (writes.output !== undefined || writes.removed !== undefined) {
      const { kept, removed, passed, tooLarge } = await writeTargets(corpus, result, writes);
      const toStderr = writes.output === '-' || writes.removed === '-';
      if (summary)
        await printSummary(corpus, result, { inputs, k, bits: hashOpts.bits, verify, mode, timing, report }, toStderr);
      report.tell(
        `kept ${kept} of ${result.count} documents` +
          (writes.output !== undefined ? ` (${writes.output === '-' ? 'standard output' : writes.output})` : '') +
          `, removed ${removed}` +
          (writes.removed !== undefined ? ` (${writes.removed === '-' ? 'standard output' : writes.removed})` : '') +
          (passed > 0 ? `; ${passedThrough(passed, tooLarge)} passed through to the output, not deduplicated` : ''),
      );
      return 0;
    }
    if (summary) await printSummary(corpus, result, { inputs, k, bits: hashOpts.bits, verify, mode, timing, report });
    else if (v.pairs) await printPairs(corpus, result, format, result.verify ? { width: result.verify.width } : false);
    else await printClusters(corpus, result, format, v.all === true);
    if (process.stderr.isTTY && !report.isQuiet) {
      process.stderr.write(
        `${result.count} documents, ${result.pairs.a.length} pairs, ${result.clusterCount} clusters (${timing})\n`,
      );
    }
    return 0;
  } finally {
    corpus.close();
    progress.done();
  }
}

/** dedup --clickhouse URLS: fingerprints here, the join on the cluster, clusters here; pairs are not verified. */
async function dedupOnClickHouse(
  v: Values,
  positionals: string[],
  k: number,
  verified: boolean,
  threads: number,
): Promise<number> {
  if (verified) throw new UsageError('--clickhouse joins fingerprints only (the texts stay here): add --no-verify');
  if (v.sample || v.summary) throw new UsageError('--clickhouse prints pairs or clusters: drop --sample / --summary');
  const format = choice(v.format as string | undefined, 'format', ['jsonl', 'csv'] as const, 'jsonl');
  const mode = choice(v.mode as string | undefined, 'mode', ['connected', 'centre'] as ClusterMode[], 'connected');
  const hashOpts = hashOptions(v);
  const report = new Reporter(v.strict === true, v.quiet === true);
  const progress = new Progress(v.quiet === true);
  await init();
  const corpus = new Corpus(positionals, readOptions(v), report, progress, false);
  const words = hashOpts.bits / 64;
  let fps = new BigUint64Array(1 << 16);
  let n = 0;
  async function* texts(): AsyncGenerator<string | Uint8Array> {
    for await (const doc of corpus.documents()) yield doc.text;
  }
  try {
    for await (const batch of simhashStream(texts(), { ...hashOpts, threads })) {
      const m = batch.featureCounts.length;
      if ((n + m) * words > fps.length) {
        const grown = new BigUint64Array(Math.max(fps.length * 2, (n + m) * words));
        grown.set(fps.subarray(0, n * words));
        fps = grown;
      }
      fps.set(batch.fingerprints.subarray(0, m * words), n * words);
      n += m;
    }
  } finally {
    corpus.close();
    progress.done();
  }
  if (n === 0) throw noDocuments(report);
  const { joinOnCluster } = await import('./clickhouse.js');
  const joined = await joinOnCluster(v.clickhouse as string, fps.subarray(0, n * words), k, hashOpts.bits);
  const c = clusters(n, joined.pairs, { mode });
  const result = { count: n, pairs: joined.pairs, clusterOf: c.clusterOf };
  if (v.pairs) await printPairs(corpus, result, format);
  else await printClusters(corpus, result, format, v.all === true);
  if (process.stderr.isTTY && !report.isQuiet) {
    const t = joined.timings;
    process.stderr.write(
      `${n} documents, ${joined.pairs.a.length} pairs on ClickHouse (insert ${ms(t.insert)}, join ${ms(t.join)})\n`,
    );
  }
  return 0;
}

/**
 * dedup --state DIR: this run's documents against every earlier run's (a Deduplicator's directory state: segments
 * and a manifest, see src/dedup/state-dir.ts), the outputs written, then this run's segment and the new manifest
 * (each written, fsynced and renamed, the manifest last), so a run killed at any point leaves the previous state.
 * Opening takes the state's lock (DIR/lock) for the whole run: two runs appending at once would each commit a
 * manifest without the other's segment.
 */
async function openState(dir: string, options: DedupOptions, report: Reporter): Promise<Deduplicator> {
  try {
    if (!fs.statSync(dir).isDirectory()) throw new UsageError(`--state ${dir}: not a directory`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new InputError(`--state ${dir}: cannot be read (${code})`);
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (made) {
      throw new InputError(`--state ${dir}: cannot be created (${(made as NodeJS.ErrnoException).code})`);
    }
  }
  let d: Deduplicator;
  try {
    d = await Deduplicator.open(dir, options);
  } catch (error) {
    throw new InputError(`--state ${dir}: ${(error as Error).message}`);
  }
  const stale = d.tookOverLock;
  if (stale)
    report.tell(
      `note: --state ${dir}: took over the lock of process ${stale.pid}, which is gone (killed or crashed before it released it)`,
    );
  return d;
}

/**
 * Whether a file is one the state holds: by its path, as the state names it (resolved from this directory), or as
 * the same file (device and inode) as a recorded path of the same base name that still exists (another spelling,
 * a link). One run over both would read such a file once; reading it again would name it a duplicate of itself.
 */
function recordedFiles(d: Deduplicator, seen: { files: number }): (name: string, stat: fs.Stats) => boolean {
  const paths = new Set<string>();
  const byBase = new Map<string, string[]>();
  for (let i = 0; i < d.count; i++) {
    const label = d.labelOf(i);
    if (!label.startsWith('"')) continue;
    const name = JSON.parse(label) as string;
    if (name === '-') continue;
    const full = path.resolve(name);
    if (paths.has(full)) continue;
    paths.add(full);
    const base = path.basename(full);
    const list = byBase.get(base);
    if (list) list.push(full);
    else byBase.set(base, [full]);
  }
  const known = (name: string, stat: fs.Stats): boolean => {
    const full = path.resolve(name);
    if (paths.has(full)) return true;
    for (const other of byBase.get(path.basename(full)) ?? []) {
      try {
        const st = fs.statSync(other);
        if (st.dev === stat.dev && st.ino === stat.ino) return true;
      } catch {
        // Gone since: not this file.
      }
    }
    return false;
  };
  return (name, stat) => {
    if (!known(name, stat)) return false;
    seen.files++;
    return true;
  };
}

async function runWithState(
  d: Deduplicator,
  dir: string,
  corpus: Corpus,
  writes: CorpusTargetOptions,
  report: Reporter,
  t0: number,
  threads: number,
  seen: number,
): Promise<number> {
  // The inputs stream through the threaded hasher (as dedupStream's do); only their locators stay.
  const source: number[] = [];
  const offset: number[] = [];
  const length: number[] = [];
  async function* texts(): AsyncGenerator<string | Uint8Array> {
    for await (const doc of corpus.documents()) {
      source.push(doc.source ?? 0);
      offset.push(doc.offset ?? source.length - 1);
      length.push(doc.length ?? doc.text.length);
      yield doc.text;
    }
  }
  const batch = await d.addStream(texts(), { threads, label: (i) => corpus.nameJson(i) });
  // Every file already in the state is a run with nothing new, not an error: its outputs are empty.
  if (batch.duplicateOf.length === 0 && seen === 0) throw noDocuments(report);
  const first = batch.first;
  const names = {
    json: (g: number) => (g < first ? d.labelOf(g) : corpus.nameJson(g - first)),
    value: (g: number) => {
      if (g >= first) return corpus.nameValue(g - first);
      const json = d.labelOf(g);
      const parsed = JSON.parse(json) as unknown;
      return typeof parsed === 'string' ? parsed : json;
    },
  };
  const r = {
    count: source.length,
    clusterOf: batch.clusterOf,
    duplicateOf: batch.duplicateOf,
    locators: {
      source: Uint32Array.from(source),
      offset: Float64Array.from(offset),
      length: Float64Array.from(length),
    },
    names,
  };
  const kept = keptCount(batch.duplicateOf);
  if (writes.output !== undefined || writes.removed !== undefined) await writeTargets(corpus, r, writes);
  else {
    const out = new Output();
    for (let i = 0; i < r.count; i++) {
      const dup = batch.duplicateOf[i]!;
      // in_state: the document kept is an earlier run's, which may bear the same name (a record given again).
      if (dup !== -1)
        await out.line(
          `{"document":${corpus.nameJson(i)},"duplicate_of":${names.json(dup)}${dup < first ? ',"in_state":true' : ''}}`,
        );
    }
    await out.flush();
  }
  if (r.count > 0) await d.saveTo(dir);
  report.tell(
    `kept ${kept} of ${r.count} new documents, removed ${r.count - kept}` +
      (seen > 0 ? `; ${seen} files already in the state, skipped` : '') +
      `; the state holds ${d.count} documents (${ms(performance.now() - t0)})`,
  );
  return 0;
}

interface CorpusTargetOptions {
  output: string | undefined;
  removed: string | undefined;
  annotate: boolean;
  nul: boolean;
}

/** --output, --removed, --annotate and -0, checked against each other before any input is read. */
function corpusTargetsOf(v: Values): CorpusTargetOptions {
  const t = {
    output: v.output as string | undefined,
    removed: v.removed as string | undefined,
    annotate: v.annotate === true,
    nul: v.null === true,
  };
  if (t.output === '' || t.removed === '')
    throw new UsageError('--output and --removed need a path (or - for standard output)');
  if (t.output === '-' && t.removed === '-')
    throw new UsageError('--output and --removed cannot both go to standard output');
  if (t.output !== undefined && t.output === t.removed)
    throw new UsageError(`--output and --removed name the same file: ${t.output}`);
  if (t.annotate && t.output === undefined) throw new UsageError('--annotate writes the corpus: add --output PATH');
  // A target named .gz / .zst is compressed (atomic-file.ts); Zstandard needs a Node that can write it.
  for (const [flag, target] of [
    ['--output', t.output],
    ['--removed', t.removed],
  ] as const)
    if (target !== undefined && compressionOf(target) === 'zstd' && !canWriteZstd())
      throw new UsageError(
        `${flag} ${target}: writing Zstandard needs Node 22.15 or later (this is Node ${process.version}); name it .gz, or pipe ${flag} - into zstd`,
      );
  if (t.nul && t.output === undefined && t.removed === undefined)
    throw new UsageError('-0 ends the paths that --output / --removed list: add one of them');
  if ((t.output !== undefined || t.removed !== undefined) && (v.pairs || v.format !== undefined || v.all))
    throw new UsageError('--output and --removed write the corpus: drop --pairs / --format / --all');
  return t;
}

/** The targets against the inputs: where they can be written, and never over an input. */
function checkCorpusTargets(t: CorpusTargetOptions, corpus: Corpus): void {
  if (t.annotate && !corpus.jsonl && corpus.delimiter === null && !corpus.parquet)
    throw new UsageError('--annotate adds two fields to each record: it needs --jsonl, --csv, --tsv or Parquet tables');
  if (t.nul && !corpus.wholeFiles)
    throw new UsageError('-0 is for paths (files as documents): drop it with --jsonl / --csv / --tsv / --lines');
  for (const [flag, target] of [
    ['--output', t.output],
    ['--removed', t.removed],
  ] as const) {
    if (target === undefined || target === '-') continue;
    if (corpus.parquet && compressionOf(target) !== null)
      throw new UsageError(
        `${flag} ${target}: a Parquet table is compressed inside, by column: give a name without .gz / .zst`,
      );
    // Before any work: a target that cannot be written is an I/O error (exit 1), like the inputs' own.
    try {
      destination(target);
    } catch (error) {
      throw new InputError(`${flag} ${target}: ${(error as Error).message}`);
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch {
      continue; // a new file
    }
    for (const src of corpus.sources) {
      if (!src.seekable) continue;
      const s = fs.statSync(src.name);
      if (s.dev === stat.dev && s.ino === stat.ino)
        throw new UsageError(`${flag} ${target} is an input: write the deduplicated corpus elsewhere`);
    }
  }
}

/** The records passed through, by why: "3 records without a text", "1 record too large to verify", or both. */
function passedThrough(passed: number, tooLarge: number): string {
  const records = (n: number) => `${n} record${n === 1 ? '' : 's'}`;
  const without = passed - tooLarge;
  if (tooLarge === 0) return `${records(without)} without a text`;
  if (without === 0) return `${records(tooLarge)} too large to verify`;
  return `${records(passed)} (${without} without a text, ${tooLarge} too large to verify)`;
}

/**
 * Writes --output and --removed; neither replaces its target until both are written and synced (a FIFO or device
 * target is written as the run goes).
 */
async function writeTargets(corpus: Corpus, r: DeduplicatedDocuments, t: CorpusTargetOptions): Promise<WriteCounts> {
  let output: AtomicFile | null = null;
  let removed: AtomicFile | null = null;
  try {
    output = t.output !== undefined ? await AtomicFile.open(t.output) : null;
    removed = t.removed !== undefined ? await AtomicFile.open(t.removed) : null;
    const targets = { output, removed, annotate: t.annotate, nul: t.nul };
    const counts = corpus.parquet
      ? await writeParquetCorpus(corpus, r, targets)
      : await writeCorpus(corpus, r, targets);
    // Both complete and on disk before either replaces its target.
    await output?.sync();
    await removed?.sync();
    output?.publish();
    removed?.publish();
    return counts;
  } catch (error) {
    // A file system's error (full disk, file size limit, permissions): a message, not a stack trace.
    const e = error as NodeJS.ErrnoException;
    if (typeof e.code !== 'string' || e.code === 'EPIPE') throw error;
    const which = [t.output, t.removed].filter((x) => x !== undefined && x !== '-').join(' / ');
    throw new InputError(`cannot write ${which || 'standard output'}: ${e.message} (${outcome([output, removed])})`);
  } finally {
    output?.abort();
    removed?.abort();
  }
}

/** Cluster members grouped by representative (counting sort): members of rep r are order[start[r]..start[r+1]]. */
function groups(clusterOf: Uint32Array): { start: Uint32Array; order: Uint32Array } {
  const n = clusterOf.length;
  const start = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) start[clusterOf[i]! + 1]!++;
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, n);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[fill[clusterOf[i]!]!++] = i;
  return { start, order };
}

type Printed = Pick<DedupStreamResult, 'count' | 'pairs' | 'clusterOf'>;

async function printClusters(corpus: Corpus, r: Printed, format: 'jsonl' | 'csv', all: boolean) {
  const out = new Output();
  const { start, order } = groups(r.clusterOf);
  if (format === 'csv') await out.line('document,cluster,size');
  // A representative is its cluster's lowest index, so clusters come out in the order of their first documents.
  for (let rep = 0; rep < r.count; rep++) {
    const size = start[rep + 1]! - start[rep]!;
    if (size === 0 || (size < 2 && !all)) continue;
    const members = order.subarray(start[rep]!, start[rep + 1]!);
    if (format === 'csv') {
      const repName = csvField(corpus.nameCsv(rep));
      for (const i of members) await out.line(`${csvField(corpus.nameCsv(i))},${repName},${size}`);
    } else {
      const names = Array.from(members, (i) => corpus.nameJson(i)).join(',');
      await out.line(`{"cluster":${corpus.nameJson(rep)},"size":${size},"members":[${names}]}`);
    }
  }
  await out.flush();
}

/** The texts of documents `docs`, read again through their locators. */
function textsOf(
  corpus: Corpus,
  loc: DedupStreamResult['locators'],
  docs: readonly number[],
): Promise<ReadonlyArray<string | Uint8Array>> | ReadonlyArray<string | Uint8Array> {
  return corpus.reread({
    index: Uint32Array.from(docs),
    source: Uint32Array.from(docs, (d) => loc.source[d]!),
    offset: Float64Array.from(docs, (d) => loc.offset[d]!),
    length: Float64Array.from(docs, (d) => loc.length[d]!),
  });
}

/** Pairs whose Jaccard is computed per batch: their documents are read again once per batch. */
const JACCARD_BATCH_PAIRS = 1 << 14;

/**
 * Prints the pairs (a, b, distance); with `verify` (the run's shingle width) also each pair's shingle Jaccard, the
 * value verification tested against the threshold, computed exactly (verification itself stops once the threshold
 * is decided): the documents of each batch of pairs are read again and their shingle sets compared. Texts without
 * words have no Jaccard (null, or an empty cell).
 */
async function printPairs(
  corpus: Corpus,
  r: Printed & { locators?: DedupStreamResult['locators'] },
  format: 'jsonl' | 'csv',
  verify: { width: number } | false = false,
) {
  const out = new Output();
  const { a, b, distance } = r.pairs;
  const withJaccard = verify !== false && r.locators !== undefined;
  if (format === 'csv') await out.line(withJaccard ? 'a,b,distance,jaccard' : 'a,b,distance');
  for (let from = 0; from < a.length; from += JACCARD_BATCH_PAIRS) {
    const to = Math.min(a.length, from + JACCARD_BATCH_PAIRS);
    const sets = new Map<number, BigUint64Array>();
    if (withJaccard) {
      const docs = [...new Set([...a.subarray(from, to), ...b.subarray(from, to)])];
      const texts = await textsOf(corpus, r.locators!, docs);
      docs.forEach((d, q) => sets.set(d, shingleHashes(texts[q]!, verify.width)));
    }
    for (let p = from; p < to; p++) {
      let jaccard = '';
      if (withJaccard) {
        const x = sets.get(a[p]!)!;
        const y = sets.get(b[p]!)!;
        jaccard =
          x.length === 0 || y.length === 0
            ? format === 'csv'
              ? ''
              : 'null'
            : String(Math.round(jaccardSorted(x, y) * 1000) / 1000);
      }
      await out.line(
        format === 'csv'
          ? `${csvField(corpus.nameCsv(a[p]!))},${csvField(corpus.nameCsv(b[p]!))},${distance[p]}${withJaccard ? `,${jaccard}` : ''}`
          : `{"a":${corpus.nameJson(a[p]!)},"b":${corpus.nameJson(b[p]!)},"distance":${distance[p]}${withJaccard ? `,"jaccard":${jaccard}` : ''}}`,
      );
    }
  }
  await out.flush();
}

interface SummaryFacts {
  inputs: string[];
  k: number;
  bits: number;
  verify: VerifyOptions | false;
  mode: ClusterMode;
  timing: string;
  report: Reporter;
}

async function printSummary(corpus: Corpus, r: DedupStreamResult, f: SummaryFacts, toStderr = false) {
  const { start, order } = groups(r.clusterOf);
  const big: number[] = [];
  let inGroups = 0;
  for (let rep = 0; rep < r.count; rep++) {
    const size = start[rep + 1]! - start[rep]!;
    if (size < 2) continue;
    big.push(rep);
    inGroups += size;
  }
  const sizeOf = (rep: number) => start[rep + 1]! - start[rep]!;
  big.sort((x, y) => sizeOf(y) - sizeOf(x) || x - y);
  const top = big.slice(0, 10);
  // The largest clusters' first documents are read again for their snippets.
  const texts = await textsOf(corpus, r.locators, top);
  // The inputs as given (a folder, not the first file found in it), and how many files were read from them.
  const given = f.inputs.length === 0 ? ['-'] : f.inputs;
  const named =
    given.length === 1 ? (given[0] === '-' ? 'standard input' : escapeName(given[0]!)) : `${given.length} inputs`;
  const files = corpus.sources.filter((src) => src.name !== '-').length;
  const from = files > given.length ? `${named} (${files} files)` : named;
  const lines = [
    `${r.count} documents (${(corpus.bytesRead / 1e6).toFixed(1)} MB) from ${from}` +
      (f.report.skipped ? `, ${f.report.skipped} skipped` : ''),
    `k = ${f.k}, ${f.bits}-bit fingerprints, ${f.verify ? `pairs verified at shingle Jaccard ≥ ${f.verify.threshold ?? 0.6}` : 'pairs not verified'}, ${f.mode} clusters`,
    `${r.candidates} candidate pairs within k${f.verify ? ` (${r.checks} checked)` : ''}, ${r.pairs.a.length} near-duplicate pairs; ${big.length} clusters of 2 or more hold ${inGroups} documents; ${r.clusterCount} clusters in all`,
    ``,
    `Largest clusters:`,
  ];
  top.forEach((rep, t) => {
    const members = order.subarray(start[rep]!, start[rep + 1]!);
    const names = Array.from(members.subarray(0, 4), (i) => corpus.nameText(i));
    lines.push(
      `  ${String(members.length).padStart(5)} documents, e.g. ${names.join(', ')}${members.length > 4 ? ', …' : ''}`,
    );
    lines.push(`        "${snippet(texts[t]!)}"`);
  });
  lines.push('', `Time: ${f.timing}`);
  if (toStderr) process.stderr.write(lines.join('\n') + '\n');
  else await write(lines.join('\n') + '\n');
}

/** The commands by name; each takes its arguments and returns the exit code. */
const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  dedup: dedupCommand,
  hash: hashCommand,
  sql: (args) => import('./clickhouse.js').then((m) => m.sqlCommand(args)),
};

/** Runs the tool on `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === '--version' || command === '-V') {
      await write(`${packageVersion()}\n`);
      return 0;
    }
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      const topic = command === 'help' ? rest[0] : undefined;
      if (topic !== undefined && !(topic in HELP && topic !== 'main'))
        throw new UsageError(`unknown command ${JSON.stringify(topic)}`);
      await write(HELP[topic ?? 'main'] + '\n');
      return command === undefined ? 2 : 0;
    }
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    return await run(rest);
  } catch (error) {
    const e = error as Error & { code?: string };
    if (error instanceof UsageError || (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'))) {
      const known = command !== undefined && Object.hasOwn(COMMANDS, command);
      process.stderr.write(`${NAME}: ${e.message}\nRun "${NAME} ${known ? command + ' ' : ''}--help" for usage.\n`);
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

// Runs only as the program itself: not when imported, nor in a worker (which imports the library bundle).
if (isEntry()) {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
  });
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
