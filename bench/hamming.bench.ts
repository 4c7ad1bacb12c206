// Batch Hamming search speed: one query against 10^7 fingerprints (64- and 128-bit), within-k with few hits,
// the copy a one-shot call pays against a resident FingerprintSet, and a brute-force self-join of 10^5, each
// beside a plain TypeScript implementation (two 32-bit halves through a Uint32Array view), ratios from one run.
// The one-query scans are also compared with native C (bench/c/hamming.c, compiled here with gcc -O3
// -march=native and run as a child process on the same words), from DRAM (10^7) and from cache (10^5).
// Alone: `npx tsx bench/hamming.bench.ts` (SIMHASH_BUILD=scalar for the scalar build).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bench } from 'tinybench';
import {
  FingerprintSet,
  countWithinDistance,
  hammingDistancesInto,
  init,
  loadedBuild,
  selfPairsWithinDistance,
  withinDistance,
} from '../src/index.js';
import { scanLayout } from '../src/hamming/hamming.js';
import { compileClangWasm, growMemory } from './clang-wasm.js';
import { randomWords } from './corpus.js';
import type { BenchRow } from './bench-row.js';

const SCAN = 10_000_000;
const JOIN = 100_000;
/** The TypeScript self-join runs on a prefix (its pair rate does not depend on n once n fits in cache). */
const JOIN_BASELINE = 15_000;
const K = 3;

// ---------------------------------------------------------------------------------------------------------------
// Plain TypeScript baselines

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function tsDistances64(u32: Uint32Array, qlo: number, qhi: number, out: Uint8Array): void {
  const n = u32.length >>> 1;
  for (let i = 0; i < n; i++) out[i] = popcount32(u32[2 * i]! ^ qlo) + popcount32(u32[2 * i + 1]! ^ qhi);
}

function tsDistances128(u32: Uint32Array, q: Uint32Array, out: Uint8Array): void {
  const n = u32.length >>> 2;
  const q0 = q[0]!,
    q1 = q[1]!,
    q2 = q[2]!,
    q3 = q[3]!;
  for (let i = 0; i < n; i++) {
    const p = 4 * i;
    out[i] =
      popcount32(u32[p]! ^ q0) +
      popcount32(u32[p + 1]! ^ q1) +
      popcount32(u32[p + 2]! ^ q2) +
      popcount32(u32[p + 3]! ^ q3);
  }
}

function tsWithin64(u32: Uint32Array, qlo: number, qhi: number, k: number): number[] {
  const out: number[] = [];
  const n = u32.length >>> 1;
  for (let i = 0; i < n; i++) if (popcount32(u32[2 * i]! ^ qlo) + popcount32(u32[2 * i + 1]! ^ qhi) <= k) out.push(i);
  return out;
}

function tsSelfJoin64(u32: Uint32Array, n: number, k: number): number {
  let pairs = 0;
  for (let i = 0; i < n; i++) {
    const lo = u32[2 * i]!;
    const hi = u32[2 * i + 1]!;
    for (let j = i + 1; j < n; j++) if (popcount32(u32[2 * j]! ^ lo) + popcount32(u32[2 * j + 1]! ^ hi) <= k) pairs++;
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------------------------
// Native C baseline

interface NativeTiming {
  median: number;
  best: number;
}

interface NativeResult {
  distances: NativeTiming;
  distancesScalar: NativeTiming;
  count: NativeTiming;
  countScalar: NativeTiming;
  within: NativeTiming;
  withinScalar: NativeTiming;
  /** Checks that both sides scanned the same words: the sum of all distances and the count within k. */
  distanceSum: number;
  hits: number;
}

/** Compiles bench/c/hamming.c once per run; undefined (rows skipped) when gcc is missing or fails. */
function nativeBinary(): string | undefined {
  const source = new URL('./c/hamming.c', import.meta.url).pathname;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-bench-c-'));
  const binary = path.join(dir, 'hamming');
  try {
    execFileSync('gcc', ['-O3', '-march=native', '-o', binary, source], { stdio: ['ignore', 'ignore', 'pipe'] });
    return binary;
  } catch (error) {
    console.error(`native baseline skipped: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** The C scans over the first n words of randomWords(_, seed) with the bench's planted hits: ms per pass. */
function native(binary: string, n: number, passes: number, reps: number, seed: number): NativeResult {
  return JSON.parse(execFileSync(binary, [n, passes, reps, K, seed].map(String), { encoding: 'utf8' })) as NativeResult;
}

/**
 * bench/c/hamming.c compiled to WebAssembly by clang (bench/clang-wasm.ts) and run in this engine over a copy of
 * the same words: the C loops on the library's platform.
 */
class ClangScans {
  private constructor(
    readonly compiler: string,
    private readonly x: {
      distances(f: number, n: number, q: bigint, out: number): void;
      distancesScalar(f: number, n: number, q: bigint, out: number): void;
      count(f: number, n: number, q: bigint, k: number): number;
      countScalar(f: number, n: number, q: bigint, k: number): number;
    },
    private readonly fps: number,
    private readonly out: number,
  ) {}

  static compile(dir: string, words: BigUint64Array): ClangScans | undefined {
    const module = compileClangWasm(dir, 'hamming');
    if (!module) return undefined;
    const x = new WebAssembly.Instance(new WebAssembly.Module(module.bytes)).exports as unknown as ClangScans['x'] & {
      memory: WebAssembly.Memory;
      heap(): number;
    };
    const fps = (x.heap() + 63) & ~63;
    const out = fps + words.byteLength;
    growMemory(x.memory, out + words.length + 64);
    new BigUint64Array(x.memory.buffer, fps, words.length).set(words);
    return new ClangScans(module.compiler, x, fps, out);
  }

  run(scan: 'distances' | 'distancesScalar' | 'count' | 'countScalar', n: number, query: bigint): unknown {
    return scan.startsWith('count')
      ? this.x[scan as 'count'](this.fps, n, query, K)
      : this.x[scan as 'distances'](this.fps, n, query, this.out);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Data and timing

interface Timing {
  median: number; // ms per call
  best: number;
}

/**
 * Milliseconds per call of `fn`, after a warm-up (the first calls run unoptimised code). The median is the
 * figure; the best run is shown beside it because the bench machine is shared and medians swing with its load.
 */
function time(fn: () => unknown, iterations: number, warmupIterations = 2): Timing {
  const bench = new Bench({ iterations, time: 0, warmupIterations, warmupTime: 0, warmup: warmupIterations > 0 });
  bench.add('task', fn);
  const [task] = bench.runSync();
  const result = task!.result;
  if (result.state !== 'completed') throw new Error(`benchmark task ${result.state}`);
  return { median: result.latency.p50, best: result.latency.min };
}

const perSecond = (items: number, ms: number): string => (((items / ms) * 1e3) / 1e9).toFixed(2);
const rate = (items: number, t: Timing, unit: string): string =>
  `${perSecond(items, t.median)}·10⁹ ${unit} (best ${perSecond(items, t.best)})`;
const ratio = (fast: Timing, slow: Timing): string => `${(slow.median / fast.median).toFixed(1)}×`;

/**
 * WebAssembly against native C on the same words, in three rounds that alternate the two (C in a child process),
 * so that load on a shared machine hits both alike; each figure is the best of all rounds (load only adds time).
 * From DRAM: 10^7 resident fingerprints. In cache: their first 10^5 (800 KB, in L2), 50 passes per sample.
 */
function nativeRows(
  binary: string,
  clang: ClangScans | undefined,
  fps: BigUint64Array,
  query: bigint,
  distanceSum: number,
  hits: number,
): BenchRow[] {
  const resident = FingerprintSet.from(fps);
  const cached = FingerprintSet.from(fps.subarray(0, JOIN));
  const out = new Uint8Array(SCAN);
  const passes = 50;
  const wasm: Record<string, number> = {};
  const c: Record<string, number> = {};
  const keepBest = (into: Record<string, number>, key: string, ms: number) => {
    into[key] = Math.min(into[key] ?? Infinity, ms);
  };
  try {
    for (let round = 0; round < 3; round++) {
      const dram = native(binary, SCAN, 1, 5, 12345);
      if (dram.distanceSum !== distanceSum || dram.hits !== hits) {
        throw new Error(
          `native baseline scanned other data: ${dram.distanceSum}/${dram.hits} vs ${distanceSum}/${hits}`,
        );
      }
      const cache = native(binary, JOIN, passes, 7, 12345);
      for (const key of ['distances', 'distancesScalar', 'count', 'countScalar', 'within', 'withinScalar'] as const) {
        keepBest(c, `dram ${key}`, dram[key].best);
        keepBest(c, `cache ${key}`, cache[key].best);
      }
      keepBest(wasm, 'dram distances', time(() => resident.hammingDistancesInto(query, out), 5).best);
      keepBest(wasm, 'dram count', time(() => resident.countWithinDistance(query, K), 5).best);
      keepBest(wasm, 'dram within', time(() => resident.withinDistance(query, K), 5).best);
      const cacheScan = time(() => {
        for (let r = 0; r < passes; r++) cached.hammingDistancesInto(query, out.subarray(0, JOIN));
      }, 7);
      const cacheCount = time(() => {
        for (let r = 0; r < passes; r++) cached.countWithinDistance(query, K);
      }, 7);
      keepBest(wasm, 'cache distances', cacheScan.best / passes);
      keepBest(wasm, 'cache count', cacheCount.best / passes);
      if (clang) {
        if (clang.run('count', SCAN, query) !== hits) throw new Error('the C module scanned other data');
        // Each scan's faster loop of the two (plain, and unrolled as ours), as clang compiled them.
        for (const scan of ['distances', 'distancesScalar', 'count', 'countScalar'] as const) {
          const key = scan.replace('Scalar', '');
          keepBest(c, `clang dram ${key}`, time(() => clang.run(scan, SCAN, query), 5).best);
          const cached = time(() => {
            for (let r = 0; r < passes; r++) clang.run(scan, JOIN, query);
          }, 7);
          keepBest(c, `clang cache ${key}`, cached.best / passes);
        }
      }
    }
    // Both layouts forced, alternating, on the same resident set: what the kept one (timed on the first large
    // scans, src/hamming/scan-layout.ts) is worth on this machine.
    for (let round = 0; round < 3; round++) {
      for (const blocked of [true, false]) {
        scanLayout().force(blocked);
        const key = blocked ? 'blocked' : 'one stream';
        keepBest(wasm, `${key} distances`, time(() => resident.hammingDistancesInto(query, out), 5).best);
        keepBest(wasm, `${key} count`, time(() => resident.countWithinDistance(query, K), 5).best);
      }
    }
  } finally {
    scanLayout().force(null);
    resident.free();
    cached.free();
  }
  const g = (n: number, ms: number) => (n / ms / 1e6).toFixed(2);
  const kept = (kind: string) => {
    const blocked = scanLayout().chosen(kind);
    return blocked === null ? 'not yet chosen' : blocked ? 'blocked' : 'one stream';
  };
  const layoutRow: BenchRow = {
    name: `scan layout at 10⁷ resident, both forced (kept here: distances ${kept('distances64')}, count ${kept('count64')}, collect ${kept('collect64')})`,
    value: `one stream: distances ${g(SCAN, wasm['one stream distances']!)}, count ${g(SCAN, wasm['one stream count']!)}·10⁹ fp/s`,
    baseline: `blocked: ${g(SCAN, wasm['blocked distances']!)}, ${g(SCAN, wasm['blocked count']!)}·10⁹`,
    ratio: `${(wasm['blocked distances']! / wasm['one stream distances']!).toFixed(2)}×, ${(wasm['blocked count']! / wasm['one stream count']!).toFixed(2)}× blocked`,
  };
  const row = (name: string, where: 'dram' | 'cache', scan: string): BenchRow => {
    const n = where === 'dram' ? SCAN : JOIN;
    const w = wasm[`${where} ${scan}`]!;
    const vec = c[`${where} ${scan}`]!;
    const scalar = c[`${where} ${scan}Scalar`]!;
    return {
      name,
      value: `${g(n, w)}·10⁹ fp/s`,
      baseline: `C ${g(n, vec)}·10⁹; scalar C ${g(n, scalar)}·10⁹`,
      ratio: `${(vec / w).toFixed(2)}× C, ${(scalar / w).toFixed(2)}× scalar C`,
    };
  };
  const clangRow = (where: 'dram' | 'cache'): BenchRow => {
    const n = where === 'dram' ? SCAN : JOIN;
    const [d, k, cd, ck] = [
      wasm[`${where} distances`]!,
      wasm[`${where} count`]!,
      c[`clang ${where} distances`]!,
      c[`clang ${where} count`]!,
    ];
    return {
      name: `64-bit distances / count within k=3, 1 query × ${where === 'dram' ? '10⁷ (DRAM)' : '10⁵ in cache'}, vs the C compiled to WebAssembly (${clang!.compiler}, -O3 -msimd128), same engine`,
      value: `${g(n, d)} / ${g(n, k)}·10⁹ fp/s`,
      baseline: `C as WebAssembly ${g(n, cd)} / ${g(n, ck)}·10⁹`,
      ratio: `${(cd / d).toFixed(2)}× / ${(ck / k).toFixed(2)}× C as WebAssembly`,
    };
  };
  return [
    ...(clang ? [clangRow('dram'), clangRow('cache')] : []),
    row('64-bit distances, 1 query × 10⁷ (DRAM), best of 3 rounds vs native C', 'dram', 'distances'),
    row('64-bit count within k=3, 1 query × 10⁷ (DRAM), vs native C', 'dram', 'count'),
    row('64-bit within k=3 (3 hits), 1 query × 10⁷ (DRAM), vs native C', 'dram', 'within'),
    row('64-bit distances, 1 query × 10⁵ in cache, vs native C', 'cache', 'distances'),
    row('64-bit count within k=3, 1 query × 10⁵ in cache, vs native C', 'cache', 'count'),
    layoutRow,
  ];
}

export async function run(): Promise<BenchRow[]> {
  // Under bench/run.ts the module is already loaded; alone, SIMHASH_BUILD picks the build.
  if (loadedBuild() === undefined) await init(process.env.SIMHASH_BUILD === 'scalar' ? { build: 'scalar' } : {});
  const build = loadedBuild();
  const rows: BenchRow[] = [];

  // --- 64-bit scan ---
  const fps64 = randomWords(SCAN, 12345);
  const query64 = 0x0123456789abcdefn;
  for (const at of [17, SCAN / 2, SCAN - 3]) fps64[at] = query64 ^ 0b101n; // a few hits at distance 2
  const u32 = new Uint32Array(fps64.buffer);
  const qlo = Number(query64 & 0xffffffffn);
  const qhi = Number(query64 >> 32n);
  const out = new Uint8Array(SCAN);

  const copyMs = time(() => FingerprintSet.from(fps64).free(), 5);
  const set64 = FingerprintSet.from(fps64);
  const tsScan = time(() => tsDistances64(u32, qlo, qhi, out), 3);
  const scan = time(() => set64.hammingDistancesInto(query64, out), 6);
  const scanOneShot = time(() => hammingDistancesInto(query64, fps64, out), 6);
  const count = time(() => set64.countWithinDistance(query64, K), 6);
  const within = time(() => set64.withinDistance(query64, K), 6);
  const withinOneShot = time(() => withinDistance(query64, fps64, K), 6);
  const countOneShot = time(() => countWithinDistance(query64, fps64, K), 6);
  const tsWithin = time(() => tsWithin64(u32, qlo, qhi, K), 3);
  const distanceSum = out.reduce((a, b) => a + b, 0);
  const hits = set64.countWithinDistance(query64, K);
  set64.free();
  // Native C over the same words: 10^7 from DRAM, then the first 10^5 (800 KB, in L2) 50 passes per sample.
  const binary = nativeBinary();
  if (binary) {
    const clang = ClangScans.compile(path.dirname(binary), fps64);
    rows.push(...nativeRows(binary, clang, fps64, query64, distanceSum, hits));
    fs.rmSync(path.dirname(binary), { recursive: true, force: true });
  }
  rows.push(
    {
      name: `64-bit distances, 1 query × 10⁷, FingerprintSet (${build})`,
      value: rate(SCAN, scan, 'fp/s'),
      baseline: rate(SCAN, tsScan, 'fp/s'),
      ratio: ratio(scan, tsScan),
    },
    {
      name: '64-bit count within k=3, FingerprintSet',
      value: rate(SCAN, count, 'fp/s'),
      baseline: rate(SCAN, tsWithin, 'fp/s'),
      ratio: ratio(count, tsWithin),
    },
    {
      name: '64-bit within k=3 (3 hits), FingerprintSet',
      value: rate(SCAN, within, 'fp/s'),
      baseline: rate(SCAN, tsWithin, 'fp/s'),
      ratio: ratio(within, tsWithin),
    },
    {
      name: '64-bit within k=3, one-shot BigUint64Array (chunked copy)',
      value: rate(SCAN, withinOneShot, 'fp/s'),
      baseline: rate(SCAN, tsWithin, 'fp/s'),
      ratio: ratio(withinOneShot, tsWithin),
    },
    {
      name: '64-bit count within k=3, one-shot BigUint64Array',
      value: rate(SCAN, countOneShot, 'fp/s'),
      baseline: rate(SCAN, tsWithin, 'fp/s'),
      ratio: ratio(countOneShot, tsWithin),
    },
    {
      name: '64-bit distances, one-shot BigUint64Array',
      value: rate(SCAN, scanOneShot, 'fp/s'),
      baseline: rate(SCAN, tsScan, 'fp/s'),
      ratio: ratio(scanOneShot, tsScan),
    },
    {
      name: 'copy cost: FingerprintSet.from(10⁷ × 64-bit) + free',
      value: `${copyMs.median.toFixed(1)} ms (${((SCAN * 8) / copyMs.median / 1e6).toFixed(1)} GB/s; best ${copyMs.best.toFixed(1)} ms)`,
    },
  );

  // --- 128-bit scan ---
  const fps128 = randomWords(2 * SCAN, 67890);
  const query128 = (0xfedcba9876543210n << 64n) | query64;
  const u32w = new Uint32Array(fps128.buffer);
  const q128 = new Uint32Array([qlo, qhi, 0x76543210, 0xfedcba98]);
  const set128 = FingerprintSet.from(fps128, { bits: 128 });
  const tsScan128 = time(() => tsDistances128(u32w, q128, out), 3);
  const scan128 = time(() => set128.hammingDistancesInto(query128, out), 6);
  const within128 = time(() => set128.withinDistance(query128, K), 6);
  set128.free();
  rows.push(
    {
      name: '128-bit distances, 1 query × 10⁷, FingerprintSet',
      value: rate(SCAN, scan128, 'fp/s'),
      baseline: rate(SCAN, tsScan128, 'fp/s'),
      ratio: ratio(scan128, tsScan128),
    },
    {
      name: '128-bit within k=3 (no hits), FingerprintSet',
      value: rate(SCAN, within128, 'fp/s'),
      baseline: rate(SCAN, tsScan128, 'fp/s'),
      ratio: ratio(within128, tsScan128),
    },
  );

  // --- self-join, brute force ---
  const joinFps = fps64.slice(0, JOIN);
  for (let i = 0; i < 50; i++) joinFps[1000 * i + 7] = joinFps[1000 * i]! ^ 0b11n; // 50 near pairs
  // The 3·10^4 one-shot join also warms the join kernels up for the long 10^5 one, timed without a warm-up.
  const joinOneShot = time(() => selfPairsWithinDistance(joinFps.subarray(0, 30_000), K), 3);
  const joinSet = FingerprintSet.from(joinFps);
  const pairs = (JOIN * (JOIN - 1)) / 2;
  const join = time(() => joinSet.selfPairsWithinDistance(K), 2, 0);
  // The same kernels on a set that fits in L2 (800 KB): what they do when DRAM bandwidth is not the limit.
  const inCache = time(() => {
    for (let r = 0; r < 50; r++) joinSet.countWithinDistance(query64, K);
  }, 6);
  const inCacheTs = time(() => {
    for (let r = 0; r < 5; r++) tsWithin64(new Uint32Array(joinFps.buffer), qlo, qhi, K);
  }, 3);
  joinSet.free();
  rows.push({
    name: '64-bit count within k=3, 1 query × 10⁵ in cache, FingerprintSet',
    value: rate(50 * JOIN, inCache, 'fp/s'),
    baseline: rate(5 * JOIN, inCacheTs, 'fp/s'),
    ratio: `${(50 / inCache.median / (5 / inCacheTs.median)).toFixed(1)}×`,
  });
  const basePairs = (JOIN_BASELINE * (JOIN_BASELINE - 1)) / 2;
  const tsJoin = time(() => tsSelfJoin64(new Uint32Array(joinFps.buffer), JOIN_BASELINE, K), 2, 1);
  const joinRate = pairs / join.median;
  const tsRate = basePairs / tsJoin.median;
  rows.push({
    name: '64-bit self-join of 10⁵, k=3, brute force (TS on 1.5·10⁴)',
    value: rate(pairs, join, 'pairs/s'),
    baseline: rate(basePairs, tsJoin, 'pairs/s'),
    ratio: `${(joinRate / tsRate).toFixed(1)}×`,
  });
  rows.push({
    name: '64-bit self-join of 3·10⁴, one-shot BigUint64Array',
    value: rate((30_000 * 29_999) / 2, joinOneShot, 'pairs/s'),
  });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = performance.now();
  const rows = await run();
  console.table(rows);
  console.log(`hamming bench: ${((performance.now() - started) / 1e3).toFixed(1)} s`);
}
