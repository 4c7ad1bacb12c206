// The chunked join of connected clusters (verify-candidates.ts, joinAndVerify) with its walks on workers beside
// the verifier: on one thread they take turns with verification, each about half of dedupStream's time after
// hashing (2 GB of edited copies: the walk 14 s, verification 14 s) while the other workers are idle. Each walk
// (walkShares: two, over their own tables) runs on a worker, puts its chunks in its slots of shared memory, and goes
// on with each fingerprint's cluster as it stood at verifiedBefore of its next chunk's position, which this thread
// publishes in shared memory (a copy per position it may still be read at). joinAndVerify on one thread tells its
// walks the clusters as late, so both paths walk the same pairs in the same order: the same candidates, checks,
// pairs and clusters, whatever the timing. The pairs of distinct texts with one fingerprint are verified here once
// the walks have started (ChunkVerifier.verifyWithin; both paths walk their first chunks with the clusters from
// before them): on 2 GB of edited copies 1.8 s that the walks spent idle.
import type { Pairs } from '../results.js';
import { ChunkWalk, type SizeFilter } from '../join/join.js';
import type { JoinPlan } from '../join/join-plan.js';
import { MIN_THREADED_COST } from '../join/find-near-duplicates.js';
import { sharedPool } from '../runtime/pool.js';
import { offerTasks } from '../runtime/pool-worker.js';
import type { Collapsed } from './dedup-groups.js';
import {
  type CandidateChecks,
  ChunkVerifier,
  type JoinedAndVerified,
  verifiedBefore,
  walkChunk,
  walkLag,
  walkShares,
} from './verify-candidates.js';

const WALK_TASK = 'join-walk';
/** The control words (Int32Array): positions verified, stop asked, then per walk its chunks produced, then per slot
 * its pair count and whether it is its walk's last chunk. */
const VERIFIED = 0;
const STOP = 1;
const PER_WALK = 2;
const produced = (walk: number) => PER_WALK + walk;
const slotCount = (walks: number, slot: number) => PER_WALK + walks + 2 * slot;
const slotLast = (walks: number, slot: number) => PER_WALK + walks + 2 * slot + 1;
/** How long a wait lasts before it looks again (for a stop, or a worker that failed). */
const WAIT_MS = 500;

interface WalkTask {
  fps: BigUint64Array;
  plan: JoinPlan;
  tables: number[];
  walk: number;
  walks: number;
  sizes: SizeFilter | null;
  /** Shared: copies of each fingerprint's cluster, after v positions verified at v % copies. */
  roots: Uint32Array[];
  /** Shared: the control words. */
  control: Int32Array;
  /** Shared: slots of `chunk` pairs, `slots` per walk: walk w's chunk c in slot w * slots + c % slots. */
  a: Uint32Array;
  b: Uint32Array;
  distance: Uint8Array;
  chunk: number;
  slots: number;
}

function walkTask(t: WalkTask): { result: number } {
  let chunks = 0;
  /** Waits until at least `count` positions are verified. */
  const verified = (count: number): void => {
    for (;;) {
      if (Atomics.load(t.control, STOP) !== 0) throw new Error('join walk stopped: verification failed');
      const done = Atomics.load(t.control, VERIFIED);
      if (done >= count) return;
      Atomics.wait(t.control, VERIFIED, done, WAIT_MS);
    }
  };
  /** How many positions are verified before this walk's next chunk is walked. */
  const seen = () => verifiedBefore(t.walk + chunks * t.walks, t.walks);
  // The copy after seen() positions is not written over before this walk's next chunk is verified: the next copy
  // in its place is the one after seen() + copies >= that chunk's position + 1.
  const roots = (): Uint32Array => {
    verified(seen());
    return t.roots[seen() % t.roots.length]!;
  };
  const walk = new ChunkWalk(t.fps, t.plan, t.tables, roots, t.chunk, t.sizes);
  for (;;) {
    const step = walk.nextViews();
    // This walk's chunk that had the slot before is verified by then: its position, walkLag + 1 of this walk's
    // chunks back, is below seen().
    verified(seen());
    const slot = t.walk * t.slots + (chunks % t.slots);
    const at = slot * t.chunk;
    t.a.set(step.pairs.a, at);
    t.b.set(step.pairs.b, at);
    t.distance.set(step.pairs.distance, at);
    Atomics.store(t.control, slotCount(t.walks, slot), step.pairs.a.length);
    Atomics.store(t.control, slotLast(t.walks, slot), step.last ? 1 : 0);
    Atomics.store(t.control, produced(t.walk), ++chunks);
    Atomics.notify(t.control, produced(t.walk));
    if (step.last) return { result: walk.total };
  }
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
 * The planned walk cost (join-plan.ts units, ≈ ns) from which the walks go to workers: a walk there saves at most
 * its own time, and a worker to start with the library, and the shared slots, cost about 100 ms of a CLI run (the
 * bundled sample's join, planned at 0.6 ms: 121–161 ms on two threads against 15–29 ms on one). findNearDuplicates'
 * bound for threads. Tests lower it to take this path on small corpora.
 */
export const walkBesideFrom = { cost: MIN_THREADED_COST };

/**
 * joinAndVerify with its walks on workers of the shared pool; null where the platform cannot (no shared memory), or
 * the walk is too small to pay for a worker (walkBesideFrom), and the caller walks on this thread.
 */
export async function joinAndVerifyBeside(
  n: number,
  groups: Collapsed,
  plan: JoinPlan,
  o: Omit<CandidateChecks, 'mode' | 'pairsMode'>,
  threads: number,
): Promise<JoinedAndVerified | null> {
  if (threads < 2 || plan.cost < walkBesideFrom.cost || !canWalkBeside()) return null;
  walksBeside.count++;
  const v = new ChunkVerifier(n, groups, o);
  const shares = walkShares(plan);
  const walks = shares.length;
  const shared = (bytes: number) => new SharedArrayBuffer(bytes);
  const initial = v.roots();
  // A walk reads the copy after verifiedBefore(p) positions, p its chunk's position: copies of the positions up
  // to p may be written meanwhile, walks * walkLag + 1 of them. Each walk puts down walkLag + 1 chunks: those not
  // verified yet, and the one it walks.
  const lag = walkLag(walks);
  const perWalk = lag + 1;
  const roots = Array.from({ length: walks * lag + 1 }, () => new Uint32Array(shared(initial.byteLength)));
  roots[0]!.set(initial);
  const control = new Int32Array(shared(4 * slotLast(walks, walks * perWalk)));
  const chunk = walkChunk.pairs;
  const slots = walks * perWalk;
  const a = new Uint32Array(shared(4 * slots * chunk));
  const b = new Uint32Array(shared(4 * slots * chunk));
  const distance = new Uint8Array(shared(slots * chunk));
  // Together: each walk waits for the verification of the other's chunks.
  const tasks = sharedPool().runTogether<number>(
    WALK_TASK,
    shares.map((tables, walk) => ({
      ...{ fps: groups.distinctFps, plan, tables, walk, walks, sizes: v.sizeFilter },
      ...{ roots, control, a, b, distance, chunk, slots: perWalk },
    })),
    threads,
  );
  let failure: { error: unknown } | null = null;
  const ended = Promise.all(tasks).then(
    () => {},
    (error: unknown) => {
      failure = { error };
    },
  );
  const taken = new Array<number>(walks).fill(0);
  const over = new Array<boolean>(walks).fill(false);
  try {
    // While the walks put down their first chunks, which they walk with the clusters from before it.
    v.verifyWithin();
    for (let p = 0; over.includes(false); p++) {
      const w = p % walks;
      if (!over[w]) {
        for (;;) {
          const made = Atomics.load(control, produced(w));
          if (made > taken[w]!) break;
          if (failure) throw (failure as { error: unknown }).error;
          const wait = waitAsync!(control, produced(w), made, WAIT_MS);
          if (wait.async) await Promise.race([wait.value, ended]);
        }
        const slot = w * perWalk + (taken[w]! % perWalk);
        taken[w]!++;
        const count = Atomics.load(control, slotCount(walks, slot));
        over[w] = Atomics.load(control, slotLast(walks, slot)) !== 0;
        const at = slot * chunk;
        const pairs: Pairs = {
          a: a.subarray(at, at + count),
          b: b.subarray(at, at + count),
          distance: distance.subarray(at, at + count),
        };
        v.take(pairs);
      }
      // The clusters after p + 1 positions, over a copy no walk reads any more.
      roots[(p + 1) % roots.length]!.set(v.roots());
      Atomics.store(control, VERIFIED, p + 1);
      Atomics.notify(control, VERIFIED);
    }
    await Promise.all(tasks);
  } catch (error) {
    // The walks must not wait forever for a chunk to be verified.
    Atomics.store(control, STOP, 1);
    Atomics.notify(control, VERIFIED);
    await ended;
    throw error;
  }
  return v.result();
}
