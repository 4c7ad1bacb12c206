// FingerprintIndex at 64 bits: bulk build time, bytes per fingerprint, single-query p50/p99 latency, batched
// queries per second, and the speed-up over a linear scan of the same fingerprints (the library's resident
// FingerprintSet.withinDistance in WebAssembly, and a plain TypeScript scan), all measured in this run.
// Data: random fingerprints, 1% of them planted within k of another. Queries: stored fingerprints moved by up to
// k bits (half) and random fingerprints (half).
// N = 10^5 and 10^6 by default; SIMHASH_BENCH_LARGE=1 adds 10^7. Alone: `npx tsx bench/fingerprint-index.bench.ts`.
import { Bench } from 'tinybench';
import { FingerprintIndex, FingerprintSet, init } from '../src/index.js';
import type { BenchRow } from './bench-row.js';

const LATENCY_QUERIES = 20_000;
const BATCH = 10_000;

function xorshift(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

function flip(next: () => number, fp: bigint, bits: number): bigint {
  for (let i = 0; i < bits; i++) fp ^= 1n << BigInt(next() & 63);
  return fp;
}

function dataset(n: number, k: number, seed: number): BigUint64Array {
  const next = xorshift(seed);
  const fps = new BigUint64Array(n);
  const u32 = new Uint32Array(fps.buffer);
  for (let i = 0; i < u32.length; i++) u32[i] = next();
  for (let i = 1; i < n; i += 100) fps[i] = flip(next, fps[i - 1]!, next() % (k + 1));
  return fps;
}

function queries(fps: BigUint64Array, count: number, k: number, seed: number): BigUint64Array {
  const next = xorshift(seed);
  const out = new BigUint64Array(count);
  for (let i = 0; i < count; i++) {
    out[i] =
      i % 2 === 0 ? flip(next, fps[next() % fps.length]!, next() % (k + 1)) : (BigInt(next()) << 32n) | BigInt(next());
  }
  return out;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Plain TypeScript linear scan: two 32-bit halves per fingerprint. */
function tsScan(u32: Uint32Array, q: bigint, k: number): number {
  const qlo = Number(q & 0xffffffffn);
  const qhi = Number(q >> 32n);
  let c = 0;
  for (let i = 0; i < u32.length; i += 2) if (popcount32(u32[i]! ^ qlo) + popcount32(u32[i + 1]! ^ qhi) <= k) c++;
  return c;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const us = (ns: number): string => `${(ns / 1000).toFixed(2)} µs`;
const fmtN = (n: number): string => `10^${Math.round(Math.log10(n))}`;

async function measure(n: number, k: number, rows: BenchRow[]): Promise<void> {
  const fps = dataset(n, k, 0x9e3779b9 ^ n ^ k);
  const ids = Uint32Array.from({ length: n }, (_, i) => i);
  (globalThis as { gc?: () => void }).gc?.();
  const t0 = performance.now();
  const index = new FingerprintIndex({ bits: 64, maxDistance: k });
  index.addMany(ids, fps);
  const buildMs = performance.now() - t0;
  const plan = index.explain();
  const label = `N=${fmtN(n)} k=${k}`;
  rows.push({
    name: `${label}: bulk build (addMany)`,
    value: `${buildMs.toFixed(0)} ms`,
    baseline: `${((n / buildMs) * 1e-3).toFixed(1)} M fp/s`,
  });
  rows.push({
    name: `${label}: bytes per fingerprint`,
    value: plan.bytesPerFingerprintActual.toFixed(1),
    baseline: `plan: ${plan.layout === 'linear' ? 'linear' : `${plan.tables.length} tables × ${plan.tables[0]!.leadingBits} leading bits, d=${plan.directoryBits}, tail ${plan.tailBits}, radius ${plan.probeRadius}`}`,
  });

  // Single-query latency.
  const qs = queries(fps, LATENCY_QUERIES, k, 7 + n);
  for (let i = 0; i < 2000; i++) index.query(qs[i]!); // warm-up (optimising tiers)
  const times = new Float64Array(LATENCY_QUERIES);
  let hits = 0;
  for (let i = 0; i < LATENCY_QUERIES; i++) {
    const s = process.hrtime.bigint();
    hits += index.query(qs[i]!).id.length;
    times[i] = Number(process.hrtime.bigint() - s);
  }
  times.sort();
  const p50 = percentile(times, 0.5);
  const p99 = percentile(times, 0.99);

  // Linear scans of the same fingerprints: WebAssembly (a resident FingerprintSet) and TypeScript.
  const set = FingerprintSet.from(fps);
  const scanQueries = qs.subarray(0, 200);
  let check = 0;
  for (let i = 0; i < 20; i++) check += set.withinDistance(scanQueries[i]!, k).length;
  const s0 = performance.now();
  for (let i = 0; i < scanQueries.length; i++) check += set.withinDistance(scanQueries[i]!, k).length;
  const wasmScanNs = ((performance.now() - s0) * 1e6) / scanQueries.length;
  set.free();
  const u32 = new Uint32Array(fps.buffer);
  const tsQueries = Math.max(3, Math.round(2e7 / n));
  const s1 = performance.now();
  for (let i = 0; i < tsQueries; i++) check += tsScan(u32, scanQueries[i]!, k);
  const tsScanNs = ((performance.now() - s1) * 1e6) / tsQueries;
  rows.push({
    name: `${label}: query p50 / p99`,
    value: `${us(p50)} / ${us(p99)}`,
    baseline: `linear scan: WASM ${us(wasmScanNs)}, TS ${us(tsScanNs)}`,
    ratio: `${(wasmScanNs / p50).toFixed(0)}× vs WASM scan, ${(tsScanNs / p50).toFixed(0)}× vs TS (p50; ${(hits / LATENCY_QUERIES).toFixed(2)} results/query)`,
  });

  // Batched throughput through tinybench (few iterations: one batch is already 10^4 queries).
  const batch = queries(fps, BATCH, k, 11 + n);
  const bench = new Bench({ time: 200, iterations: 5, warmupTime: 0, warmupIterations: 2 });
  bench.add('queryMany', () => {
    index.queryMany(batch);
  });
  await bench.run();
  const result = bench.tasks[0]!.result;
  const mean = result && 'latency' in result ? result.latency.mean : NaN;
  const qps = (BATCH / mean) * 1000;
  rows.push({
    name: `${label}: queryMany batches of ${BATCH}`,
    value: `${(qps / 1000).toFixed(0)}k queries/s`,
    baseline: `WASM scan ${(1e9 / wasmScanNs).toFixed(0)} queries/s`,
    ratio: `${((qps * wasmScanNs) / 1e9).toFixed(0)}× vs WASM scan`,
  });
  if (check < 0) console.log(check);
  index.free();
}

export async function run(): Promise<BenchRow[]> {
  await init();
  const rows: BenchRow[] = [];
  const sizes = [100_000, 1_000_000];
  if (process.env.SIMHASH_BENCH_LARGE === '1') sizes.push(10_000_000);
  for (const n of sizes) {
    for (const k of [3, 6, 8]) await measure(n, k, rows);
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = performance.now();
  for (const r of await run())
    console.log(`${r.name.padEnd(44)} ${r.value.padEnd(22)} ${r.baseline ?? ''}  ${r.ratio ?? ''}`);
  console.log(`(${((performance.now() - t) / 1000).toFixed(1)} s)`);
}
