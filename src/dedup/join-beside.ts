// The chunked join of connected clusters (verify-candidates.ts, joinAndVerify) with its walk on a worker beside
// the verifier: the two took turns on one thread, each about half of dedupStream's time after hashing (2 GB of
// edited copies: join 15 s, verification 12-18 s) while the other workers were idle. The worker walks up to
// WALK_LAG chunks ahead of this thread, which verifies them from slots of shared memory, and goes on with each
// fingerprint's cluster as it stood WALK_LAG chunks before, which this thread publishes in shared memory (a copy
// per chunk of lag and one more). joinAndVerify on one thread tells its walk the clusters as late, so both paths
// walk the same pairs in the same order: the same candidates, checks, pairs and clusters, whatever the timing.
import type { Pairs } from '../results.js';
import { type SizeFilter, walkInChunks } from '../join/join.js';
import type { JoinPlan } from '../join/join-plan.js';
import { sharedPool } from '../runtime/pool.js';
import { offerTasks } from '../runtime/pool-worker.js';
import type { Collapsed } from './dedup-groups.js';
import {
  type CandidateChecks,
  ChunkVerifier,
  type JoinedAndVerified,
  WALK_LAG,
  walkChunk,
} from './verify-candidates.js';

const WALK_TASK = 'join-walk';
/** The control words (Int32Array): chunks produced, chunks verified, walk done, stop asked, a count per slot. */
const PRODUCED = 0;
const VERIFIED = 1;
const DONE = 2;
const STOP = 3;
const COUNT = 4;
/** How long a wait lasts before it looks again (for a stop, or a worker that failed). */
const WAIT_MS = 500;

/** Slots of chunks, and copies of the clusters: chunk c in slot c % RING, the clusters after v chunks at v % RING. */
const RING = WALK_LAG + 1;

interface WalkTask {
  fps: BigUint64Array;
  plan: JoinPlan;
  sizes: SizeFilter | null;
  /** Shared: RING copies of each fingerprint's cluster. */
  roots: Uint32Array[];
  /** Shared: the control words. */
  control: Int32Array;
  /** Shared: RING slots of `chunk` pairs each. */
  a: Uint32Array;
  b: Uint32Array;
  distance: Uint8Array;
  chunk: number;
}

function walkTask(t: WalkTask): { result: number } {
  let produced = 0;
  /** Waits until at least `count` chunks are verified. */
  const verified = (count: number): void => {
    for (;;) {
      if (Atomics.load(t.control, STOP) !== 0) throw new Error('join walk stopped: verification failed');
      const done = Atomics.load(t.control, VERIFIED);
      if (done >= count) return;
      Atomics.wait(t.control, VERIFIED, done, WAIT_MS);
    }
  };
  /** The clusters the walk goes on with after `produced` chunks: those after produced - WALK_LAG verified. */
  const lagged = () => Math.max(produced - WALK_LAG, 0);
  const total = walkInChunks(
    t.fps,
    t.plan,
    (pairs) => {
      // Chunk c's slot held chunk c - RING, verified before the walk went on past chunk c - 1 (below).
      const slot = produced % RING;
      const at = slot * t.chunk;
      t.a.set(pairs.a, at);
      t.b.set(pairs.b, at);
      t.distance.set(pairs.distance, at);
      Atomics.store(t.control, COUNT + slot, pairs.a.length);
      Atomics.store(t.control, PRODUCED, ++produced);
      Atomics.notify(t.control, PRODUCED);
      verified(lagged());
    },
    // Read before the walk emits its next chunk, so before the verifier can overwrite this copy (it writes the
    // clusters after lagged() + RING chunks there, once it has verified that many).
    () => t.roots[lagged() % RING]!,
    t.chunk,
    t.sizes,
  );
  Atomics.store(t.control, DONE, 1);
  Atomics.notify(t.control, PRODUCED);
  return { result: total };
}

offerTasks({ [WALK_TASK]: walkTask });

/** Atomics.waitAsync (ES2024; Node 16+, Chromium 87+), where the platform has it. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync?: (
      array: Int32Array,
      index: number,
      value: number,
      timeout: number,
    ) => { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

/** Whether this platform can walk the join beside the verifier: shared memory and waits that do not block. */
function canWalkBeside(): boolean {
  return (
    typeof SharedArrayBuffer === 'function' &&
    typeof waitAsync === 'function' &&
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== false
  );
}

/** How many joins walked beside the verifier in this process (for tests: that the path was taken). */
export const walksBeside = { count: 0 };

/**
 * joinAndVerify with the walk on a worker of the shared pool; null where the platform cannot (no shared memory),
 * and the caller walks on this thread.
 */
export async function joinAndVerifyBeside(
  n: number,
  groups: Collapsed,
  plan: JoinPlan,
  o: Omit<CandidateChecks, 'mode' | 'pairsMode'>,
  threads: number,
): Promise<JoinedAndVerified | null> {
  if (threads < 2 || !canWalkBeside()) return null;
  walksBeside.count++;
  const v = new ChunkVerifier(n, groups, o);
  const shared = (bytes: number) => new SharedArrayBuffer(bytes);
  const initial = v.roots();
  const roots = Array.from({ length: RING }, () => new Uint32Array(shared(initial.byteLength)));
  roots[0]!.set(initial);
  const control = new Int32Array(shared(4 * (COUNT + RING)));
  const chunk = walkChunk.pairs;
  const a = new Uint32Array(shared(4 * RING * chunk));
  const b = new Uint32Array(shared(4 * RING * chunk));
  const distance = new Uint8Array(shared(RING * chunk));
  const payload: WalkTask = {
    fps: groups.distinctFps,
    plan,
    sizes: v.sizeFilter,
    roots,
    control,
    a,
    b,
    distance,
    chunk,
  };
  const task = sharedPool().run<number>(WALK_TASK, payload, threads);
  let failure: { error: unknown } | null = null;
  const ended = task.then(
    () => {},
    (error: unknown) => {
      failure = { error };
    },
  );
  let verified = 0;
  try {
    for (;;) {
      const produced = Atomics.load(control, PRODUCED);
      if (verified < produced) {
        const at = (verified % RING) * chunk;
        const count = Atomics.load(control, COUNT + (verified % RING));
        const pairs: Pairs = {
          a: a.subarray(at, at + count),
          b: b.subarray(at, at + count),
          distance: distance.subarray(at, at + count),
        };
        v.take(pairs);
        verified++;
        // The clusters after `verified` chunks, over those after verified - RING, which the walk has read.
        roots[verified % RING]!.set(v.roots());
        Atomics.store(control, VERIFIED, verified);
        Atomics.notify(control, VERIFIED);
        continue;
      }
      // Done is set after the last chunk is counted: with done seen, the count read again is final.
      if (Atomics.load(control, DONE) !== 0 && verified === Atomics.load(control, PRODUCED)) break;
      if (failure) throw (failure as { error: unknown }).error;
      const wait = waitAsync!(control, PRODUCED, produced, WAIT_MS);
      if (wait.async) await Promise.race([wait.value, ended]);
    }
    await task;
  } catch (error) {
    // The walk must not wait forever for a chunk to be verified.
    Atomics.store(control, STOP, 1);
    Atomics.notify(control, VERIFIED);
    await ended;
    throw error;
  }
  return v.result();
}
