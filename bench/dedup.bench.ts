// Corpus dedup speed: the all-pairs join (findNearDuplicates) on 10^6 random 64-bit fingerprints at k = 3, one
// and two threads (10^7 with SIMHASH_BENCH_LARGE=1), checked against a brute-force join on 10^5 planted
// fingerprints; a plain TypeScript brute-force join for the ratio; end-to-end dedup of text (the bundled
// sample, repeated with edits to ~25 MB, or ~100 MB with SIMHASH_BENCH_LARGE=1) with its time split, against
// simhashMany, also copy-heavy; verification against the JavaScript verifier it replaced; exact-duplicate inputs.
// Alone: `npx tsx bench/dedup.bench.ts`.
import fs from 'node:fs';
import {
  dedup,
  findNearDuplicates,
  simhashMany,
  verifyPairs,
  init,
  loadedBuild,
  selfPairsWithinDistance,
  type Pairs,
} from '../src/index.js';
import { planJoin } from '../src/join/join-plan.js';
import { randomWords } from './corpus.js';
import { jsVerifiedCount } from './verify-baseline.js';
import type { BenchRow } from './bench-row.js';

const K = 3;
const LARGE = process.env.SIMHASH_BENCH_LARGE === '1';
/** seomoz simhash-cpp find_all (native C++, k = 3, best block count), measured on this machine (issue 5). */
const SEOMOZ_1E6_MS = 2200;
const SEOMOZ_1E7_MS = 69000;

/** Random fingerprints with planted relatives at distance 0..k+1 (every tenth fingerprint). */
function plantedFingerprints(n: number, k: number, seed: number): BigUint64Array {
  const fps = randomWords(n, seed);
  let x = seed * 7 + 1;
  for (let i = 10; i < n; i += 10) {
    x = (x * 1103515245 + 12345) >>> 0;
    let fp = fps[(x >>> 4) % i]!;
    const flips = x % (k + 2);
    for (let f = 0; f < flips; f++) fp ^= 1n << BigInt((x >>> (8 + f * 6)) & 63);
    fps[i] = fp;
  }
  return fps;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The plain TypeScript reference: compare every pair (two 32-bit halves per fingerprint). */
function tsBruteForce(fps: BigUint64Array, k: number): number {
  const u32 = new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
  const n = fps.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const lo = u32[2 * i]!;
    const hi = u32[2 * i + 1]!;
    for (let j = i + 1; j < n; j++) {
      if (popcount32(u32[2 * j]! ^ lo) + popcount32(u32[2 * j + 1]! ^ hi) <= k) count++;
    }
  }
  return count;
}

function samePairs(x: Pairs, y: Pairs): boolean {
  if (x.a.length !== y.a.length) return false;
  for (let i = 0; i < x.a.length; i++) {
    if (x.a[i] !== y.a[i] || x.b[i] !== y.b[i] || x.distance[i] !== y.distance[i]) return false;
  }
  return true;
}

/** Best wall time of `runs` calls (≥ 1), after one warm-up call when `warm` (the first call runs baseline-tier code). */
async function best<T>(runs: number, fn: () => T | Promise<T>, warm = true): Promise<{ ms: number; result: T }> {
  if (warm) await fn();
  let ms = Infinity;
  let result!: T;
  for (let r = 0; r < Math.max(1, runs); r++) {
    const t = performance.now();
    result = await fn();
    ms = Math.min(ms, performance.now() - t);
  }
  return { ms, result };
}

const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

/** Near-duplicate texts: the sample's documents repeated with a few words replaced, up to `bytes`. */
function corpus(bytes: number): string[] {
  const sample = fs
    .readFileSync(new URL('../data/sample/licenses.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { text: string }).text);
  const texts: string[] = [];
  let size = 0;
  let x = 12345;
  for (let round = 0; size < bytes; round++) {
    for (const t of sample) {
      if (size >= bytes) break;
      x = (x * 1103515245 + 12345) >>> 0;
      // Round 0 is the sample itself; later rounds replace one word in ~60 with a marker of the round.
      const edited =
        round === 0
          ? t
          : t.replace(/\b\w+\b/g, (w) => ((x = (x * 1103515245 + 12345) >>> 0) % 60 === 0 ? `r${round}` : w));
      texts.push(edited);
      size += edited.length;
    }
  }
  return texts;
}

export async function run(): Promise<BenchRow[]> {
  await init();
  const rows: BenchRow[] = [];
  const build = loadedBuild();

  // 10^5 planted: the join against the brute-force join (WebAssembly, n²/2 comparisons) and a TS reference.
  const planted = plantedFingerprints(100_000, K, 5);
  const ours = await best(3, () => findNearDuplicates(planted, { k: K }));
  const brute = await best(1, () => selfPairsWithinDistance(planted, K), false);
  rows.push({
    name: `join 10^5 planted, k=${K} (${build}): ${ours.result.a.length} pairs, same as brute force: ${samePairs(ours.result, brute.result) ? 'yes' : 'NO'}`,
    value: fmt(ours.ms),
    baseline: `brute force (WASM) ${fmt(brute.ms)}`,
    ratio: `${(brute.ms / ours.ms).toFixed(0)}×`,
  });
  const tsN = 20_000;
  const small = planted.subarray(0, tsN);
  const tsRef = await best(1, () => tsBruteForce(small, K), false);
  const oursSmall = await best(3, () => findNearDuplicates(small, { k: K }));
  rows.push({
    name: `join 2·10^4 vs plain TypeScript brute force (${tsRef.result} pairs both: ${tsRef.result === oursSmall.result.a.length ? 'yes' : 'NO'})`,
    value: fmt(oursSmall.ms),
    baseline: `TypeScript ${fmt(tsRef.ms)}`,
    ratio: `${(tsRef.ms / oursSmall.ms).toFixed(0)}×`,
  });

  // 10^6 random, one and two threads; 10^7 on request.
  for (const n of LARGE ? [1_000_000, 10_000_000] : [1_000_000]) {
    const fps = randomWords(n, 42);
    const plan = planJoin(n, K, 64);
    const one = await best(n > 1e6 ? 1 : 3, () => findNearDuplicates(fps, { k: K }), n <= 1e6);
    const seomoz = n > 1e6 ? SEOMOZ_1E7_MS : SEOMOZ_1E6_MS;
    const label = n > 1e6 ? '10^7' : '10^6';
    rows.push({
      name: `join ${label} random 64-bit, k=${K}, 1 thread (${plan.blocks.length} blocks, ${plan.tables.length} tables, ${plan.sortBits} sort bits; ${one.result.a.length} pairs)`,
      value: fmt(one.ms),
      baseline: `goal ≤ ${n > 1e6 ? '5 s' : '0.2 s'}; seomoz C++ ${fmt(seomoz)}`,
      ratio: `${(seomoz / one.ms).toFixed(1)}× seomoz`,
    });
    const two = await best(n > 1e6 ? 1 : 3, () => findNearDuplicates(fps, { k: K, threads: 2 }), n <= 1e6);
    rows.push({
      name: `join ${label} random 64-bit, k=${K}, 2 threads (same pairs: ${samePairs(one.result, two.result) ? 'yes' : 'NO'})`,
      value: fmt(two.ms),
      baseline: `1 thread ${fmt(one.ms)}`,
      ratio: `${(one.ms / two.ms).toFixed(2)}×`,
    });
  }
  const wide = randomWords(2_000_000, 9); // 10^6 128-bit fingerprints
  const wideJoin = await best(2, () => findNearDuplicates(wide, { k: 6, bits: 128 }));
  rows.push({ name: `join 10^6 random 128-bit, k=6 (${wideJoin.result.a.length} pairs)`, value: fmt(wideJoin.ms) });

  // End to end on text, against simhashMany on the same texts (the goal: dedup ≤ 3× simhashMany, ≥ 100 MB/s).
  const target = LARGE ? 100e6 : 25e6;
  const texts = corpus(target);
  const mb = texts.reduce((s, t) => s + t.length, 0) / 1e6;
  dedup(texts.slice(0, 1000)); // warm-up
  // The defaults (k = 12, candidates verified by shingle Jaccard) and simhashMany alternately, best of 3 each: one
  // after the other, the ratio moved from 4.0 to 6.4 between two runs on this machine.
  let e2e = { ms: Infinity, result: dedup(texts) };
  let hashOnly = { ms: Infinity, result: simhashMany(texts) };
  for (let r = 0; r < 3; r++) {
    const d = await best(1, () => dedup(texts), false);
    if (d.ms < e2e.ms) e2e = d;
    const h = await best(1, () => simhashMany(texts), false);
    if (h.ms < hashOnly.ms) hashOnly = h;
  }
  const { hash, join, verify, cluster } = e2e.result.timings;
  rows.push({
    name: `dedup ${mb.toFixed(0)} MB of edited copies (${texts.length} documents; k=${e2e.result.k}: ${e2e.result.candidates} candidates, ${e2e.result.pairs.a.length} pairs, ${e2e.result.clusterCount} clusters)`,
    value: `${fmt(e2e.ms)} (${(mb / (e2e.ms / 1000)).toFixed(0)} MB/s)`,
    baseline: `simhashMany ${fmt(hashOnly.ms)}; hash ${fmt(hash)}, join ${fmt(join)}, verify ${fmt(verify)}, cluster ${fmt(cluster)}`,
    ratio: `${(e2e.ms / hashOnly.ms).toFixed(2)}× simhashMany (goal ≤ 3×)`,
  });
  // Copy-heavy: every document of the corpus three times (mirrors, boilerplate).
  const copies = [...texts, ...texts, ...texts];
  const e2eCopies = await best(1, () => dedup(copies), false);
  const hashCopies = await best(1, () => simhashMany(copies), false);
  rows.push({
    name: `dedup ${(3 * mb).toFixed(0)} MB copy-heavy (each document 3 times; ${e2eCopies.result.clusterCount} clusters)`,
    value: `${fmt(e2eCopies.ms)} (${((3 * mb) / (e2eCopies.ms / 1000)).toFixed(0)} MB/s)`,
    baseline: `simhashMany ${fmt(hashCopies.ms)}`,
    ratio: `${(e2eCopies.ms / hashCopies.ms).toFixed(2)}× simhashMany (goal ≤ 3×)`,
  });

  // Verification alone, WebAssembly against the JavaScript verifier it replaced, on the same candidate pairs.
  const candidates = findNearDuplicates(simhashMany(texts), { k: 12 });
  const wasmVerify = await best(1, () => verifyPairs(texts, candidates), false);
  const jsVerify = await best(1, () => jsVerifiedCount(texts, candidates.a, candidates.b), false);
  rows.push({
    name: `verify ${candidates.a.length} candidate pairs of the ${mb.toFixed(0)} MB (kept: WebAssembly ${wasmVerify.result.a.length}, JavaScript ${jsVerify.result})`,
    value: fmt(wasmVerify.ms),
    baseline: `JavaScript verifier ${fmt(jsVerify.ms)}`,
    ratio: `${(jsVerify.ms / wasmVerify.ms).toFixed(1)}×`,
  });

  // Exact duplicates (goal: one cluster each, ≤ 1 s each).
  for (const [label, heavy] of [
    ['10^5 identical texts', new Array<string>(1e5).fill(texts[0]!)],
    ['10^6 empty strings', new Array<string>(1e6).fill('')],
    ['10^5 copies of "©"', new Array<string>(1e5).fill('©')],
  ] as const) {
    const r = await best(1, () => dedup(heavy), false);
    rows.push({
      name: `dedup ${label} (${r.result.clusterCount} cluster${r.result.clusterCount === 1 ? '' : 's'})`,
      value: fmt(r.ms),
      baseline: 'goal ≤ 1 s',
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await run())
    console.log(
      `${row.name}: ${row.value}${row.baseline ? ` | ${row.baseline}` : ''}${row.ratio ? ` | ${row.ratio}` : ''}`,
    );
}
