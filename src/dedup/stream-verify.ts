// Checking candidate pairs of a streamed corpus, whose texts are no longer in memory: the pairs are cut into
// batches whose documents add up to about `budget` bytes, each batch's documents are read again through the
// caller's `reread` (given their locators, sorted by source and offset), and the batch is checked with
// verifyPairs (or dropFeaturelessPairs without verification) here or in a pool worker. A few batches are in
// flight at once; the kept flags land at each pair's own position, so the result is the one of a single call.
import { show } from '../errors.js';
import type { WorkerPool } from '../runtime/pool.js';
import type { NearDuplicatePairs } from './join.js';
import { packTexts, transferOf } from '../runtime/pool-texts.js';
import { type CheckTask, checkPairs } from './stream-tasks.js';
import { type WithSpare, keepSpare } from '../runtime/spare-buffers.js';
import { sameText } from './exact-copies.js';
import type { VerifyOptions } from './verify-pairs.js';

/** Where documents can be read again: one entry per document asked for. */
export interface Locators {
  /** The documents' indices in stream order. */
  index: Uint32Array;
  /** What each document's `source` was (default 0). */
  source: Uint32Array;
  /** Each document's `offset` (default: its index). */
  offset: Float64Array;
  /** Each document's `length` (default: its length in bytes). */
  length: Float64Array;
}

/** Reads documents again, in the order asked: their texts (or UTF-8 bytes), exactly as they were streamed. */
export type Reread = (
  documents: Locators,
) => ReadonlyArray<string | Uint8Array> | Promise<ReadonlyArray<string | Uint8Array>>;

export interface StoredLocators {
  source: Uint32Array;
  offset: Float64Array;
  length: Float64Array;
}

export interface CheckContext {
  verify: Required<VerifyOptions> | false;
  featureCounts: Float64Array;
  locators: StoredLocators;
  reread: Reread;
  budget: number;
  threads: number;
  pool: WorkerPool | undefined;
  onProgress: (done: number, total: number) => void;
}

export async function checkCandidates(found: NearDuplicatePairs, ctx: CheckContext): Promise<NearDuplicatePairs> {
  const { a, b, distance } = found;
  const counts = ctx.featureCounts;
  const keep = new Uint8Array(a.length);
  // Without verification only pairs of two featureless documents need their texts (dropFeaturelessPairs keeps
  // every pair of two documents with features, and no pair of one with and one without).
  const needed: number[] = [];
  for (let p = 0; p < a.length; p++) {
    if (ctx.verify) needed.push(p);
    else {
      const ca = counts[a[p]!]!;
      const cb = counts[b[p]!]!;
      if (ca === 0 && cb === 0) needed.push(p);
      else keep[p] = ca > 0 && cb > 0 ? 1 : 0;
    }
  }
  const inFlight: Promise<void>[] = [];
  const maxInFlight = ctx.threads + 1;
  let done = 0;
  let pairs: number[] = [];
  let docs = new Set<number>();
  let bytes = 0;
  let batches = 0;
  const flush = async (last: boolean): Promise<void> => {
    if (pairs.length === 0) return;
    const batchPairs = pairs;
    const batchDocs = docs;
    pairs = [];
    docs = new Set();
    bytes = 0;
    // Work of one batch in all is done here: starting a worker would cost more than it saves.
    const here = last && batches === 0;
    batches++;
    const running = runBatch(batchPairs, [...batchDocs], here);
    running.catch(() => undefined); // awaited in order below; this only keeps it from counting as unhandled
    inFlight.push(running);
    while (inFlight.length >= maxInFlight) await inFlight.shift();
  };
  const runBatch = async (batchPairs: number[], members: number[], here: boolean): Promise<void> => {
    const { texts, local } = await readAgain(members, ctx);
    const task: Omit<CheckTask, 'texts'> = {
      pairs: {
        a: Uint32Array.from(batchPairs, (p) => local.get(a[p]!)!),
        b: Uint32Array.from(batchPairs, (p) => local.get(b[p]!)!),
        distance: Uint8Array.from(batchPairs, (p) => distance[p]!),
      },
      verify: ctx.verify,
      featureCounts: Float64Array.from(local.keys(), (d) => counts[d]!),
    };
    let flags: Uint8Array;
    if (ctx.pool && !here) {
      const texts_ = packTexts(texts);
      const reply = ctx.pool.run<WithSpare<Uint8Array>>(
        'check',
        { ...task, texts: texts_ },
        ctx.threads,
        transferOf(texts_),
      );
      flags = keepSpare(await reply);
    } else flags = checkPairs(texts, task);
    batchPairs.forEach((p, i) => {
      keep[p] = flags[i]!;
    });
    done += batchPairs.length;
    ctx.onProgress(done, needed.length);
  };
  try {
    for (const p of needed) {
      const x = a[p]!;
      const y = b[p]!;
      const add = (docs.has(x) ? 0 : ctx.locators.length[x]!) + (docs.has(y) || x === y ? 0 : ctx.locators.length[y]!);
      if (pairs.length > 0 && bytes + add > ctx.budget) await flush(false);
      docs.add(x);
      docs.add(y);
      bytes += add;
      pairs.push(p);
    }
    await flush(true);
    await Promise.all(inFlight);
  } catch (error) {
    await Promise.allSettled(inFlight);
    throw error;
  }
  let kept = 0;
  for (let p = 0; p < keep.length; p++) kept += keep[p]!;
  const out = { a: new Uint32Array(kept), b: new Uint32Array(kept), distance: new Uint8Array(kept) };
  let q = 0;
  for (let p = 0; p < keep.length; p++) {
    if (!keep[p]) continue;
    out.a[q] = a[p]!;
    out.b[q] = b[p]!;
    out.distance[q++] = distance[p]!;
  }
  return out;
}

/**
 * The texts of `members` (document indices) read again through `reread`, asked for sorted by source and offset (so
 * files are read front to back), and each member's position among them.
 */
async function readAgain(
  members: number[],
  ctx: Pick<CheckContext, 'locators' | 'reread'>,
): Promise<{ texts: ReadonlyArray<string | Uint8Array>; local: Map<number, number> }> {
  const { source, offset, length } = ctx.locators;
  members.sort((x, y) => source[x]! - source[y]! || offset[x]! - offset[y]! || x - y);
  const local = new Map<number, number>();
  const loc: Locators = {
    index: Uint32Array.from(members),
    source: new Uint32Array(members.length),
    offset: new Float64Array(members.length),
    length: new Float64Array(members.length),
  };
  members.forEach((d, i) => {
    local.set(d, i);
    loc.source[i] = source[d]!;
    loc.offset[i] = offset[d]!;
    loc.length[i] = length[d]!;
  });
  const texts = await ctx.reread(loc);
  if (!Array.isArray(texts) || texts.length !== members.length)
    throw new TypeError(`reread must return one text per document asked for (${members.length}), got ${show(texts)}`);
  return { texts, local };
}

/**
 * Confirms the exact copies that the content hash found: each copy (copyOf[i] !== i, its first copy copyOf[i]) is
 * read again with its first copy, a batch of about `budget` bytes at a time, and compared byte for byte. A copy
 * whose text differs (two texts with one 128-bit hash) becomes its own first copy, so the join and verification
 * decide about it like any other text. Returns how many were not copies.
 */
export async function confirmCopies(
  copyOf: Uint32Array,
  ctx: Pick<CheckContext, 'locators' | 'reread' | 'budget'>,
): Promise<number> {
  const { length } = ctx.locators;
  let pending: number[] = [];
  let docs = new Set<number>();
  let bytes = 0;
  let differ = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const { texts, local } = await readAgain([...docs], ctx);
    for (const i of pending) {
      if (!sameText(texts[local.get(i)!]!, texts[local.get(copyOf[i]!)!]!)) {
        copyOf[i] = i;
        differ++;
      }
    }
    pending = [];
    docs = new Set();
    bytes = 0;
  };
  for (let i = 0; i < copyOf.length; i++) {
    const first = copyOf[i]!;
    if (first === i) continue;
    const add = (docs.has(i) ? 0 : length[i]!) + (docs.has(first) ? 0 : length[first]!);
    if (pending.length > 0 && bytes + add > ctx.budget) await flush();
    docs.add(i);
    docs.add(first);
    bytes += add;
    pending.push(i);
  }
  await flush();
  return differ;
}
