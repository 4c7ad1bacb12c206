// Fingerprinting throughput: MB/s of English text from a JS string, per tokenizer and width, beside the
// BigInt port of the Java reference and the npm package simhash-js, measured in the same run. The ratio that load
// on a shared machine does not move: a batch of real documents (the license sample) fingerprinted, against
// TextEncoder.encodeInto of the same texts into one buffer (the least any WebAssembly text kernel must pay).
// The batch's pure-ASCII documents are also fingerprinted by native C (bench/c/fingerprint.c, the same kernel
// compiled here with gcc -O3 -march=native and run as a child process on the same bytes): how far the WebAssembly
// is from this machine's limit for the same algorithm. A second build without gcc's vectoriser and with the
// WebAssembly's carry-save reducer, and a third for SSE4 only (128-bit vectors, WebAssembly's width: it has no
// gathers and no 512-bit masks), narrow that down; the same C compiled to WebAssembly by clang and run in this
// engine from the same strings (bench/clang-wasm.ts) separates what the platform costs from what our kernel
// costs. A checksum of the fingerprints checks that all did the same.
import { Bench } from 'tinybench';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {
  createSimHasher,
  init,
  loadedBuild,
  simhash,
  simhashMany,
  simhashOfHashes,
  type Bits,
  type TokenizerName,
} from '../src/index.js';
import { javaBigIntSimhash } from './baselines/java-bigint.js';
import { ClangFingerprinter, compileClangWasm } from './clang-wasm.js';
import { englishDocuments, englishText } from './corpus.js';
import type { BenchRow } from './bench-row.js';

const require = createRequire(import.meta.url);
const sjs = require('simhash-js') as { SimHash: new () => { hash(text: string): number } };

function mbps(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

// ---------------------------------------------------------------------------------------------------------------
// Native C baseline

interface NativeResult {
  mode: string;
  documents: number;
  bytes: number;
  best_ms: number;
  median_ms: number;
  /** Hex of the XOR over documents of fingerprint * (index + 1) mod 2^64 (`checksum` below). */
  checksum: string;
}

/** Timed passes over the documents per run of the C program (a pass takes 1.5-2 ms here). */
const NATIVE_REPS = 50;
/** Rounds of the alternating comparison with C (each runs every C program once per mode). */
const ALTERNATING_ROUNDS = 4;

/**
 * The native builds: gcc at its best; without its vectoriser (the WebAssembly's reducer, but still this
 * machine's 512-bit masks for the token scan); and for x86-64-v2 (SSE4, POPCNT) with BMI1: 128-bit vectors only,
 * the instruction set V8 compiles WebAssembly SIMD to.
 */
const NATIVE_BUILDS = {
  C: ['-O3', '-march=native'],
  'scalar C': ['-O3', '-march=native', '-fno-tree-vectorize', '-fno-tree-slp-vectorize', '-DREDUCER_PLANES'],
  'SSE C': ['-O3', '-march=x86-64-v2', '-mbmi', '-DREDUCER_PLANES'],
} as const;
type NativeBuild = keyof typeof NATIVE_BUILDS;

/** Compiles bench/c/fingerprint.c into `dir`; undefined (rows skipped) when gcc is missing or fails. */
function nativeBinary(dir: string, build: NativeBuild): string | undefined {
  const source = new URL('./c/fingerprint.c', import.meta.url).pathname;
  const binary = path.join(dir, build.replace(' ', '-'));
  try {
    execFileSync('gcc', [...NATIVE_BUILDS[build], '-o', binary, source], { stdio: ['ignore', 'ignore', 'pipe'] });
    return binary;
  } catch (error) {
    console.error(`native baseline skipped: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** The C program's input: each text as [u32 little-endian byte length][UTF-8 bytes]. */
function writeRecords(file: string, texts: readonly string[]): void {
  const parts: Buffer[] = [];
  for (const t of texts) {
    const bytes = Buffer.from(t, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    parts.push(length, bytes);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}

/** The C program's checksum of the same fingerprints: XOR of fingerprint * (index + 1) mod 2^64. */
function checksum(fingerprints: BigUint64Array): bigint {
  let x = 0n;
  for (let i = 0; i < fingerprints.length; i++) x ^= BigInt.asUintN(64, fingerprints[i]! * BigInt(i + 1));
  return x;
}

function native(binary: string, file: string, mode: TokenizerName): NativeResult {
  return JSON.parse(execFileSync(binary, [file, mode, String(NATIVE_REPS)], { encoding: 'utf8' })) as NativeResult;
}

export async function run(): Promise<BenchRow[]> {
  await init({ build: (process.env.SIMHASH_BUILD as 'simd' | 'scalar' | undefined) ?? 'auto' });
  const text = englishText(4_000_000);
  const small = text.slice(0, 100_000); // the slow baselines get less text
  const bytes = Buffer.byteLength(text);
  const smallBytes = Buffer.byteLength(small);
  const bench = new Bench({ time: 1000, iterations: 8, warmupTime: 200, warmupIterations: 2 });
  const configs: Array<[TokenizerName, Bits]> = [
    ['whitespace', 64],
    ['words', 64],
    ['shingles', 64],
    ['ngrams', 64],
    ['segmenter', 64],
    ['whitespace', 128],
    ['words', 128],
    ['shingles', 128],
  ];
  for (const [tokenizer, bits] of configs) {
    const h = createSimHasher({ tokenizer, bits });
    const input = tokenizer === 'segmenter' ? small : text;
    bench.add(`${tokenizer} ${bits}`, () => {
      h.hash(input);
    });
  }
  const java = createSimHasher({ preset: 'java' });
  bench.add('java preset 64', () => {
    java.hash(text);
  });
  bench.add('BigInt port of the Java reference', () => {
    javaBigIntSimhash(small);
  });
  const simhashJs = new sjs.SimHash();
  bench.add('simhash-js', () => {
    simhashJs.hash(small);
  });

  // Documents as they come (2,000 license texts, ~2.2 MB), as one batch per call.
  const docs = englishDocuments(2000);
  const docBytes = docs.reduce((a, d) => a + Buffer.byteLength(d), 0);
  const encoder = new TextEncoder();
  const joined = new Uint8Array(docBytes * 3 + 16);
  bench.add('encodeInto of the documents', () => {
    let at = 0;
    for (const d of docs) at += encoder.encodeInto(d, joined.subarray(at)).written;
  });
  const docModes: TokenizerName[] = ['shingles', 'words', 'whitespace'];
  for (const tokenizer of docModes) {
    const h = createSimHasher({ tokenizer });
    bench.add(`documents ${tokenizer}`, () => {
      h.hashMany(docs);
    });
  }
  // Short documents (titles, messages): one simhash() call each against one batch, and simhash-js per call.
  const shortDocs = docs.map((d, i) => d.slice(0, 60 + ((i * 37) % 200)));
  bench.add('short documents, simhash() each', () => {
    for (const d of shortDocs) simhash(d);
  });
  bench.add('short documents, simhashMany', () => {
    simhashMany(shortDocs);
  });
  bench.add('short documents, simhash-js each', () => {
    for (const d of shortDocs) simhashJs.hash(d);
  });
  // The batch's pure-ASCII documents (a UTF-8 byte per UTF-16 unit), beside native C on the same bytes (timed in
  // the alternating rounds below).
  const ascii = docs.filter((d) => Buffer.byteLength(d) === d.length);
  const asciiBytes = ascii.reduce((a, d) => a + d.length, 0);
  bench.add('encodeInto of the ASCII documents', () => {
    let at = 0;
    for (const d of ascii) at += encoder.encodeInto(d, joined.subarray(at)).written;
  });
  const asciiHashers = new Map(docModes.map((t) => [t, createSimHasher({ tokenizer: t })] as const));
  const asciiFingerprints = new Map(docModes.map((t) => [t, asciiHashers.get(t)!.hashMany(ascii)] as const));
  const nativeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-bench-c-'));
  const recordFile = path.join(nativeDir, 'documents.bin');
  const nativeResults = new Map<string, NativeResult>(); // by `${build} ${tokenizer}`
  const binaries = new Map<NativeBuild, string>();
  for (const build of Object.keys(NATIVE_BUILDS) as NativeBuild[]) {
    const binary = nativeBinary(nativeDir, build);
    if (binary) binaries.set(build, binary);
  }
  const runNative = () => {
    for (const [build, binary] of binaries) {
      try {
        for (const tokenizer of docModes) {
          const r = native(binary, recordFile, tokenizer);
          const kept = nativeResults.get(`${build} ${tokenizer}`);
          if (!kept || r.best_ms < kept.best_ms) nativeResults.set(`${build} ${tokenizer}`, r);
        }
      } catch (error) {
        console.error(`native baseline (${build}) failed: ${(error as Error).message.split('\n')[0]}`);
        binaries.delete(build);
        for (const tokenizer of docModes) nativeResults.delete(`${build} ${tokenizer}`);
      }
    }
  };
  if (binaries.size > 0) writeRecords(recordFile, ascii);
  // The same C compiled to WebAssembly by clang, in this engine, from the same strings (bench/clang-wasm.ts),
  // against the SIMD build (the C module uses WebAssembly SIMD).
  const clangModule = loadedBuild() === 'simd' ? compileClangWasm(nativeDir, 'fingerprint') : undefined;
  const samples = new Map<string, number[]>(); // by `${side} ${tokenizer}`: ms per pass, every sample
  const sample = (key: string, pass: () => unknown) => {
    const t = performance.now();
    pass();
    const list = samples.get(key) ?? [];
    list.push(performance.now() - t);
    samples.set(key, list);
  };
  const clangSame = new Map<TokenizerName, boolean>();
  // The comparisons with C run after the tinybench tasks, in rounds that alternate our kernel, the C programs
  // and the C module on the ASCII documents: all of them see the same load, which moves by up to 2x
  // between minutes on these VMs. Each side's best over the rounds is the figure, its median beside it.
  const runAlternating = () => {
    const clang = clangModule ? new ClangFingerprinter(clangModule.bytes, ascii) : undefined;
    if (clang)
      for (const tokenizer of docModes)
        clangSame.set(tokenizer, checksum(clang.run(tokenizer)) === checksum(asciiFingerprints.get(tokenizer)!));
    for (let round = 0; round < ALTERNATING_ROUNDS; round++) {
      runNative();
      for (const tokenizer of docModes)
        for (let rep = 0; rep < 5; rep++) {
          sample(`ours ${tokenizer}`, () => asciiHashers.get(tokenizer)!.hashMany(ascii));
          if (clang) sample(`clang ${tokenizer}`, () => clang.run(tokenizer));
        }
    }
  };

  const n = 1_000_000;
  const hashes = new BigUint64Array(n);
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < n; i++) hashes[i] = x = BigInt.asUintN(64, x * 6364136223846793005n + 1442695040888963407n);
  // Weights as users have them: TF-IDF-like floats (a log-spread, every value distinct) and integer counts.
  let seed = 12345;
  const uniform = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const weights = new Float64Array(n).map(() => Math.log1p(uniform() * 50) * (0.5 + uniform()));
  const counts = new Float64Array(n).map(() => 1 + Math.floor(-Math.log(1 - uniform()) * 3));
  bench.add('weighted features (kernel)', () => {
    simhashOfHashes(hashes, { weights });
  });
  bench.add('integer-weighted features (kernel)', () => {
    simhashOfHashes(hashes, { weights: counts });
  });
  // The plain TypeScript loop (the 64 counters of test/reference.ts, on the hashes' 32-bit halves) on a tenth.
  const halves = new Uint32Array(hashes.buffer, 0, n / 5);
  bench.add('weighted features (plain TypeScript)', () => {
    const c = new Float64Array(64);
    for (let j = 0; j < n / 10; j++) {
      const w = weights[j]!;
      const lo = halves[2 * j]!;
      const hi = halves[2 * j + 1]!;
      for (let i = 0; i < 32; i++) {
        c[i]! += (lo >>> i) & 1 ? w : -w;
        c[i + 32]! += (hi >>> i) & 1 ? w : -w;
      }
    }
    return c;
  });
  bench.add('unit features (kernel)', () => {
    simhashOfHashes(hashes);
  });
  try {
    await bench.run();
    runAlternating();
  } finally {
    fs.rmSync(nativeDir, { recursive: true, force: true });
  }

  const ms = (name: string) => (bench.getTask(name)!.result as unknown as { latency: { mean: number } }).latency.mean;
  const baseline = mbps(smallBytes, ms('BigInt port of the Java reference'));
  const peer = mbps(smallBytes, ms('simhash-js'));
  const rows: BenchRow[] = [];
  for (const [tokenizer, bits] of configs) {
    const v = mbps(tokenizer === 'segmenter' ? smallBytes : bytes, ms(`${tokenizer} ${bits}`));
    rows.push({
      name: `${tokenizer}, ${bits}-bit`,
      value: `${v.toFixed(0)} MB/s`,
      baseline: `${(v / baseline).toFixed(0)}× BigInt port`,
      ratio: `${(v / peer).toFixed(0)}× simhash-js`,
    });
  }
  const jv = mbps(bytes, ms('java preset 64'));
  rows.push({
    name: "preset 'java', 64-bit",
    value: `${jv.toFixed(0)} MB/s`,
    baseline: `${(jv / baseline).toFixed(0)}× BigInt port`,
    ratio: `${(jv / peer).toFixed(0)}× simhash-js`,
  });
  rows.push({ name: 'BigInt port of the Java reference', value: `${baseline.toFixed(1)} MB/s` });
  rows.push({ name: 'simhash-js 1.0.0', value: `${peer.toFixed(1)} MB/s` });
  // Best runs: load on the machine only ever adds time. The ratio of medians is shown beside it.
  const latency = (name: string) =>
    (bench.getTask(name)!.result as unknown as { latency: { min: number; p50: number } }).latency;
  const encode = latency('encodeInto of the documents');
  for (const tokenizer of docModes) {
    const t = latency(`documents ${tokenizer}`);
    rows.push({
      name: `${tokenizer}, 64-bit, ${docs.length} documents in one batch (${(docBytes / 1e6).toFixed(1)} MB)`,
      value: `${mbps(docBytes, t.min).toFixed(0)} MB/s (median ${mbps(docBytes, t.p50).toFixed(0)})`,
      baseline: `encodeInto ${mbps(docBytes, encode.min).toFixed(0)} MB/s`,
      ratio: `${(t.min / encode.min).toFixed(1)}× encodeInto (medians ${(t.p50 / encode.p50).toFixed(1)}×)`,
    });
  }
  {
    const perDoc = (name: string) => (latency(name).min / shortDocs.length) * 1000;
    const each = perDoc('short documents, simhash() each');
    const batch = perDoc('short documents, simhashMany');
    const peerEach = perDoc('short documents, simhash-js each');
    rows.push({
      name: `shingles, 64-bit, ${shortDocs.length} short documents (the batch's first 60–259 characters): simhash() per call / simhashMany per document`,
      value: `${each.toFixed(2)} / ${batch.toFixed(2)} µs`,
      baseline: `simhash-js per call ${peerEach.toFixed(1)} µs`,
      ratio: `${(peerEach / each).toFixed(0)}× simhash-js; a call ${(each / batch).toFixed(1)}× a batch's share`,
    });
  }
  const stats = (key: string) => {
    const sorted = [...samples.get(key)!].sort((a, b) => a - b);
    return { min: sorted[0]!, p50: sorted[sorted.length >> 1]! };
  };
  const asciiEncode = latency('encodeInto of the ASCII documents');
  for (const tokenizer of docModes) {
    for (const build of Object.keys(NATIVE_BUILDS) as NativeBuild[]) {
      const c = nativeResults.get(`${build} ${tokenizer}`);
      if (!c) continue;
      const t = stats(`ours ${tokenizer}`);
      const same =
        c.documents === ascii.length &&
        c.bytes === asciiBytes &&
        BigInt(`0x${c.checksum}`) === checksum(asciiFingerprints.get(tokenizer)!);
      rows.push({
        name:
          `${tokenizer}, 64-bit, the ${ascii.length} ASCII documents of the batch (${(asciiBytes / 1e6).toFixed(1)} MB), vs ${build}` +
          (same ? '' : ` — CHECKSUM DIFFERS: ${build} computed other fingerprints`),
        value: `${mbps(asciiBytes, t.min).toFixed(0)} MB/s (median ${mbps(asciiBytes, t.p50).toFixed(0)})`,
        baseline: `${build} ${mbps(asciiBytes, c.best_ms).toFixed(0)} MB/s (median ${mbps(asciiBytes, c.median_ms).toFixed(0)}); encodeInto ${mbps(asciiBytes, asciiEncode.min).toFixed(0)} MB/s`,
        ratio: `ours/${build} ${(c.best_ms / t.min).toFixed(2)}; time: ours ${(t.min / asciiEncode.min).toFixed(1)}×, ${build} ${(c.best_ms / asciiEncode.min).toFixed(1)}× encodeInto`,
      });
    }
  }
  if (clangModule) {
    for (const tokenizer of docModes) {
      const ours = stats(`ours ${tokenizer}`);
      const c = stats(`clang ${tokenizer}`);
      rows.push({
        name:
          `${tokenizer}, 64-bit, the same ASCII documents, vs the C compiled to WebAssembly (${clangModule.compiler}, -O3 -msimd128), same engine, same strings, alternating` +
          (clangSame.get(tokenizer) ? '' : ' — CHECKSUM DIFFERS: the C module computed other fingerprints'),
        value: `${mbps(asciiBytes, ours.min).toFixed(0)} MB/s (median ${mbps(asciiBytes, ours.p50).toFixed(0)})`,
        baseline: `C as WebAssembly ${mbps(asciiBytes, c.min).toFixed(0)} MB/s (median ${mbps(asciiBytes, c.p50).toFixed(0)})`,
        ratio: `ours/C as WebAssembly ${(c.min / ours.min).toFixed(2)} (medians ${(c.p50 / ours.p50).toFixed(2)})`,
      });
    }
  }
  const plain = n / 10 / ms('weighted features (plain TypeScript)') / 1e3;
  for (const [label, task] of [
    ['weighted features, 64-bit (hash → fingerprint)', 'weighted features (kernel)'],
    ['integer-weighted features (counts), 64-bit', 'integer-weighted features (kernel)'],
  ]) {
    const v = n / ms(task!) / 1e3;
    rows.push({
      name: label!,
      value: `${v.toFixed(0)} M features/s`,
      baseline: `plain TypeScript ${plain.toFixed(1)} M/s`,
      ratio: `${(v / plain).toFixed(1)}× plain TypeScript`,
    });
  }
  rows.push({
    name: 'unit-weight features, 64-bit (hash → fingerprint)',
    value: `${(n / ms('unit features (kernel)') / 1e3).toFixed(0)} M features/s`,
  });
  return rows.map((r) => ({ ...r, name: `[${loadedBuild()}] ${r.name}` }));
}

if (import.meta.url === `file://${process.argv[1]}`) console.table(await run());
