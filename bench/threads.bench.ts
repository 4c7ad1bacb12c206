// The worker pool on this machine's cores: fingerprinting (simhashManyAsync) with 2 threads against simhashMany,
// the size where it starts to pay (the cut-over behind PARALLEL_MIN_BYTES), findNearDuplicates of 10^7 random
// fingerprints at k = 3 on 2 threads against 1, and queryManyAsync against queryMany. One and two threads run
// alternately in the same process, best of a few runs each; beside the wall time every row gives the process's
// CPU time (process.cpuUsage counts every thread, workers included), so a speedup shows as the same CPU time in
// less wall time, and a loaded machine shows as wall time without CPU time. Alone: `npx tsx bench/threads.bench.ts`
// (SIMHASH_BENCH_SMALL=1: 10^6 fingerprints for the join and index instead of 10^7). Beside the pool's
// fingerprinting, the same documents are run by plain workers side by side: the ceiling for two threads here.
import os from 'node:os';
import {
  FingerprintIndex,
  findNearDuplicates,
  init,
  loadedBuild,
  simhashMany,
  simhashManyAsync,
} from '../src/index.js';
import { sharedPool } from '../src/runtime/pool.js';
import { englishDocuments, randomWords } from './corpus.js';
import type { BenchRow } from './bench-row.js';
import { CoreCapacity } from './core-capacity.js';

const SMALL = process.env.SIMHASH_BENCH_SMALL === '1';
const THREADS = 2;

interface Timing {
  wall: number;
  cpu: number;
}

/** Wall and process CPU milliseconds of one call. */
async function timed(fn: () => unknown): Promise<Timing> {
  const c = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wall = performance.now() - t;
  const d = process.cpuUsage(c);
  return { wall, cpu: (d.user + d.system) / 1000 };
}

/** `a` and `b` alternately, `runs` times each after a warm-up of both; the best wall time of each (with its CPU). */
async function alternate(runs: number, a: () => unknown, b: () => unknown): Promise<[Timing, Timing]> {
  await a();
  await b();
  let bestA: Timing = { wall: Infinity, cpu: 0 };
  let bestB: Timing = { wall: Infinity, cpu: 0 };
  for (let r = 0; r < runs; r++) {
    const ta = await timed(a);
    if (ta.wall < bestA.wall) bestA = ta;
    const tb = await timed(b);
    if (tb.wall < bestB.wall) bestB = tb;
  }
  return [bestA, bestB];
}

/** The longest the event loop waited between 1 ms timer ticks while `fn` ran. */
async function longestStall(fn: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let t = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - t);
    t = now;
  }, 1);
  try {
    await fn();
    return Math.max(longest, performance.now() - t);
  } finally {
    clearInterval(timer);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const range = (xs: number[], digits: number): string =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
const ms = (t: number): string => (t >= 1000 ? `${(t / 1000).toFixed(2)} s` : `${t.toFixed(1)} ms`);
const row = (one: Timing, many: Timing, name: string, value = (t: Timing) => ms(t.wall)): BenchRow => ({
  name,
  value: `${value(many)} (CPU ${ms(many.cpu)})`,
  baseline: `1 thread ${value(one)} (CPU ${ms(one.cpu)})`,
  ratio: `${(one.wall / many.wall).toFixed(2)}× wall, CPU ${(many.cpu / one.cpu).toFixed(2)}× of 1 thread`,
});

/** Documents of the license sample adding up to `bytes` of text. */
function documents(bytes: number): string[] {
  const all = englishDocuments(5000);
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const d = all[i % all.length]!;
    out.push(d);
    size += d.length;
  }
  return out;
}

const sameWords = (a: BigUint64Array, b: BigUint64Array): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export async function run(): Promise<BenchRow[]> {
  await init();
  const rows: BenchRow[] = [];
  const build = loadedBuild();
  const cores = os.availableParallelism();

  // Fingerprints, default options: 32 MB of English in documents of the sample.
  const docs = documents(32 << 20);
  const mb = docs.reduce((s, d) => s + d.length, 0) / 1e6;
  const want = simhashMany(docs);
  let same = true;
  // In the same rounds: what the cores deliver side by side (bench/core-capacity.ts), the ceiling for two threads.
  const capacity = await CoreCapacity.start(docs, THREADS, build ?? 'auto');
  let best = { mbps: 0, ms: [] as number[] };
  let one: Timing = { wall: Infinity, cpu: 0 };
  let two: Timing = { wall: Infinity, cpu: 0 };
  // Per round, the same moment: the ceiling against one thread, and the pool against the ceiling.
  const ceilings: number[] = [];
  const reached: number[] = [];
  await simhashManyAsync(docs, { threads: THREADS });
  for (let round = 0; round < 7; round++) {
    const a = await timed(() => simhashMany(docs));
    if (a.wall < one.wall) one = a;
    const b = await timed(async () => {
      same &&= sameWords(await simhashManyAsync(docs, { threads: THREADS }), want);
    });
    if (b.wall < two.wall) two = b;
    const c = await capacity.round();
    if (c.mbps > best.mbps) best = c;
    ceilings.push(c.mbps / (mb / (a.wall / 1000)));
    reached.push((100 * mb) / (b.wall / 1000) / c.mbps);
  }
  await capacity.close();
  const speed = (t: Timing) => mb / (t.wall / 1000);
  rows.push(
    row(
      one,
      two,
      `simhashManyAsync ${THREADS} threads vs simhashMany, ${docs.length} documents, ${mb.toFixed(0)} MB (${build}, ${cores} cores), same fingerprints: ${same ? 'yes' : 'NO'}`,
      (t) => `${speed(t).toFixed(0)} MB/s`,
    ),
  );
  rows.push({
    name: `the cores side by side: ${THREADS} plain workers, each running simhashMany on its half of the same documents at once (the ceiling for ${THREADS} threads; same rounds)`,
    value: `${best.mbps.toFixed(0)} MB/s (halves in ${best.ms.map((t) => t.toFixed(0)).join(' / ')} ms)`,
    baseline: `1 thread ${speed(one).toFixed(0)} MB/s; simhashManyAsync ${speed(two).toFixed(0)} MB/s`,
    ratio: `per round (medians, range): ceiling ${median(ceilings).toFixed(2)}× one thread (${range(ceilings, 2)}); simhashManyAsync at ${median(reached).toFixed(0)} % of it (${range(reached, 0)} %)`,
  });

  // The cut-over: small batches on a warm pool, 2 threads against this thread.
  for (const kib of [16, 64, 256, 1024, 4096]) {
    const batch = documents(kib << 10);
    const [a, b] = await alternate(
      15,
      () => simhashMany(batch),
      () => simhashManyAsync(batch, { threads: THREADS }),
    );
    rows.push(row(a, b, `simhashManyAsync cut-over: ${kib} KiB batch (${batch.length} documents), warm pool`));
  }

  // The join: 10^7 random fingerprints (10^6 with SIMHASH_BENCH_SMALL=1), k = 3.
  const n = SMALL ? 1_000_000 : 10_000_000;
  const fps = randomWords(n, 7);
  let pairsSame = true;
  let pairs = 0;
  const [j1, j2] = await alternate(
    SMALL ? 3 : 2,
    () => {
      pairs = findNearDuplicates(fps, { k: 3 }).a.length;
    },
    async () => {
      pairsSame &&= (await findNearDuplicates(fps, { k: 3, threads: THREADS })).a.length === pairs;
    },
  );
  rows.push(
    row(
      j1,
      j2,
      `findNearDuplicates ${n.toExponential(0)} k=3, ${THREADS} threads vs 1 (${pairs} pairs, same: ${pairsSame ? 'yes' : 'NO'})`,
    ),
  );
  // What the calling thread's event loop waits during the threaded join (planning, copies, merge; no share).
  const stall = await longestStall(() => findNearDuplicates(fps, { k: 3, threads: THREADS }));
  rows.push({
    name: `findNearDuplicates ${n.toExponential(0)} k=3, ${THREADS} threads: the longest wait of the calling thread's event loop`,
    value: ms(stall),
    baseline: `the one-thread join ${ms(j1.wall)}`,
    ratio: `${((100 * stall) / j1.wall).toFixed(0)} % of it`,
  });

  // Batched queries: an index of the same fingerprints, 10^5 queries at k = 3 (half of them stored ones).
  const index = new FingerprintIndex({ maxDistance: 3 });
  index.addMany(
    Uint32Array.from({ length: n }, (_, i) => i),
    fps,
  );
  const queries = randomWords(100_000, 99);
  queries.set(fps.subarray(0, 50_000));
  let first = { wall: 0, cpu: 0 };
  const firstStall = await longestStall(async () => {
    first = await timed(() => index.queryManyAsync(queries, 3, { threads: THREADS }));
  });
  let answersSame = true;
  let answers: unknown;
  const [q1, q2] = await alternate(
    5,
    () => {
      answers = index.queryMany(queries, 3);
    },
    async () => {
      answersSame &&=
        JSON.stringify(await index.queryManyAsync(queries, 3, { threads: THREADS })) === JSON.stringify(answers);
    },
  );
  rows.push(
    row(
      q1,
      q2,
      `queryManyAsync 10^5 queries, k=3, index of ${n.toExponential(0)}, ${THREADS} threads vs queryMany (same: ${answersSame ? 'yes' : 'NO'})`,
      (t) => `${((t.wall * 1000) / queries.length).toFixed(2)} µs/query`,
    ),
  );
  rows.push({
    name: `queryManyAsync first call: sends the index to ${THREADS} workers (one snapshot, rebuilt there)`,
    value: `${ms(first.wall)} (CPU ${ms(first.cpu)})`,
  });
  rows.push({
    name: `queryManyAsync first call: the calling thread's longest event-loop wait (taking the snapshot, posting it)`,
    value: ms(firstStall),
    baseline: `the call ${ms(first.wall)}`,
  });
  index.free();
  await sharedPool().close();
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await run())
    console.log(`${r.name}: ${r.value}${r.baseline ? ` | ${r.baseline}` : ''}${r.ratio ? ` | ${r.ratio}` : ''}`);
}
