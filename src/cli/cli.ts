#!/usr/bin/env node
// The simhash-wasm command-line tool: `dedup` (near-duplicate clusters of a corpus) and `hash` (fingerprints).
// Inputs: files, directories (recursively), JSON Lines (--jsonl, --field) or stdin. Exit codes: 0 success,
// 1 error (including a bad input under --strict), 2 usage. Bad inputs are reported on stderr with file and line
// and skipped unless --strict. A progress bar goes to stderr only when stderr is a terminal.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { init } from '../runtime/wasm.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { toHex } from '../fingerprint/bits.js';
import { clusters, defaultDedupK, findNearDuplicates, type ClusterMode } from '../dedup/dedup.js';
import { dropFeaturelessPairs, verifyPairs, type VerifyOptions } from '../dedup/verify-pairs.js';
import type { Bits, SimHashOptions } from '../fingerprint/options.js';
import { type Doc, InputError, readInputs, Reporter } from './inputs.js';
import { csvField, ms, snippet, write } from './output.js';
import { Progress } from './progress.js';
import {
  choice,
  DEDUP_OPTIONS,
  HELP,
  hashOptions,
  intOption,
  NAME,
  OPTIONS,
  readOptions,
  UsageError,
} from './usage.js';

// The sample sits in the repository's data/ folder (not in the published package): one level above dist/cli.mjs,
// two above src/cli/cli.ts when run from source.
function bundledSample(): string {
  const from = (up: string) => fileURLToPath(new URL(`${up}data/sample/licenses.jsonl`, import.meta.url));
  const bundled = from('../');
  return fs.existsSync(bundled) ? bundled : from('../../');
}

function hashAll(
  docs: Doc[],
  options: SimHashOptions & { bits: Bits },
  progress: Progress,
): { fps: BigUint64Array; featureCounts: Float64Array } {
  // Batches of about 4 MB: one WebAssembly call each, and a progress update between them. The options were
  // checked by hashOptions.
  const hasher = createSimHasher(options);
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
