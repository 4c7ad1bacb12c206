// The streaming deduper, for corpora larger than memory: documents arrive as an (async) iterable and are
// fingerprinted in batches (simhashStream, in worker threads when threads > 1); per document only its
// fingerprint, feature count, locator (source, offset, length: typed arrays) and shingle set stay, the sets in the
// set store (set-store.ts: memory up to a budget, then a temporary file). The join, the verification
// (pair-checks.ts) and the clusters are dedup()'s own; texts are read again through `reread` only to confirm exact
// copies (stream-verify.ts). Memory grows with the number of documents, not with their bytes, and the result
// equals dedup() on the same texts with the same options, for any thread count.
import { show } from '../errors.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import {
  type DedupOptions,
  type DedupResult,
  checkDedupOptions,
  featurelessByTrimmedText,
  dedupResult,
} from './dedup.js';
import { collapse, fingerprintKeys, indices, tooManyPairs } from './dedup-groups.js';
import { planJoinFor } from '../join/join-estimate.js';
import { findNearDuplicates, joinIfSmall } from '../join/find-near-duplicates.js';
import { WHOLE_JOIN_PAIRS, joinedAndVerified, joinsInChunks } from './verify-candidates.js';
import { joinAndVerifyBeside } from './join-beside.js';
import { firstOfEqual } from './exact-copies.js';
import { type StreamOptions, checkStreamOptions, checkedTextBytes, hashBatches } from './stream-hash.js';
import { type Locators, type Reread, confirmCopies } from './stream-verify.js';
import { STORE_WINDOW_BYTES, SetStore, setMemoryBytes, temporarySpill } from './set-store.js';

export type { Locators, Reread } from './stream-verify.js';

/** One document of a stream: its text (or UTF-8 bytes) and where it can be read again. */
export interface StreamDocument {
  /** The document: a string, or UTF-8 bytes. */
  text: string | Uint8Array;
  /** A number naming where the document lives (a file's index, say); default 0. Handed back to `reread`. */
  source?: number;
  /** Its position in that source (a byte offset, say); default: the document's index. */
  offset?: number;
  /** Its size there in bytes, used to size the re-read batches; default: the text's length. */
  length?: number;
}

/** The stage of dedupStream that an onProgress call reports, in this order. */
export type DedupStreamPhase = 'hashing' | 'joining' | 'verifying' | 'clustering';

/**
 * dedup()'s options with the stream's (threads, batchBytes, maxDocumentBytes) and the means to read documents again.
 * Unknown names throw TypeError; bad values TypeError or RangeError naming them.
 */
export interface DedupStreamOptions extends DedupOptions, StreamOptions {
  /**
   * Returns the texts of documents again (exact copies and their first copy, to confirm them byte for byte, a batch
   * at a time): the same texts that were streamed, in the order of the locators given.
   */
  reread: Reread;
  /** Bytes of documents (by their `length`) read again per batch (default 32 MiB). */
  verifyBatchBytes?: number;
  /**
   * Bytes of shingle sets (about 0.65 per byte of English text) kept in memory for verification (default 256 MiB,
   * less 64 MiB per thread beyond the first, at least 64 MiB: what each worker takes); in Node the rest go to a
   * temporary file, read back a window at a time.
   */
  verifyMemoryBytes?: number;
  /**
   * Called as work proceeds: after each batch, the documents hashed so far (total -1: unknown); then each later
   * phase as it starts (0 of 1) or, for 'verifying', as it ends (1 of 1).
   */
  onProgress?: (phase: DedupStreamPhase, done: number, total: number) => void;
}

/** dedup()'s result for the streamed documents, with their count, size and locators (typed-array columns). */
export interface DedupStreamResult extends DedupResult {
  /** Documents read. */
  count: number;
  /** Their total size: bytes of UTF-8, or string lengths for string texts. */
  bytes: number;
  /** Every document's locator, by index (as given, defaults filled in). */
  locators: Omit<Locators, 'index'>;
}

const KNOWN = new Set([
  'bits',
  'preset',
  'tokenizer',
  'width',
  'normalize',
  'locale',
  'k',
  'mode',
  'verify',
  'pairs',
  'maxPairs',
  'keep',
  'threshold',
  'threads',
  'batchBytes',
  'maxDocumentBytes',
  'reread',
  'verifyBatchBytes',
  'verifyMemoryBytes',
  'onProgress',
]);

/** A growable typed array. */
class Column<T extends Uint32Array | Float64Array | BigUint64Array> {
  length = 0;
  constructor(
    public data: T,
    private readonly make: (n: number) => T,
  ) {}
  reserve(n: number): void {
    if (n <= this.data.length) return;
    const next = this.make(Math.max(n, this.data.length * 2, 1024));
    (next as Uint32Array).set(this.data as Uint32Array);
    this.data = next;
  }
  done(): T {
    return this.data.slice(0, this.length) as T;
  }
}

function isIterable(x: unknown): x is AsyncIterable<unknown> | Iterable<unknown> {
  return x !== null && typeof x === 'object' && (Symbol.asyncIterator in x || Symbol.iterator in x);
}

/**
 * dedup() for a stream of documents: texts → fingerprints (batched) → pairs within k → checked pairs → clusters.
 * Memory grows with the number of documents, not their bytes; the result equals dedup()'s on the same texts with
 * the same options, for any thread count. `reread` is called to confirm exact copies byte for byte.
 *
 * @example
 * ```ts
 * import { dedupStream, init, type StreamDocument } from 'simhash-wasm';
 *
 * await init();
 * const texts = ['The quick brown fox jumps over the lazy dog', 'The quick brown fox jumps over the lazy dog.'];
 * const documents: StreamDocument[] = texts.map((text) => ({ text }));
 * const result = await dedupStream(documents, {
 *   // offset defaults to the document's index, so the texts can be read again by it
 *   reread: (locators) => Array.from(locators.offset, (i) => texts[i]!),
 * });
 * result.duplicateOf; // Int32Array: -1 for a kept document, else the index kept in its place
 * ```
 */
export async function dedupStream(
  documents: AsyncIterable<StreamDocument> | Iterable<StreamDocument>,
  options: DedupStreamOptions,
): Promise<DedupStreamResult> {
  if (!isIterable(documents))
    throw new TypeError(`documents must be an iterable or async iterable, got ${show(documents)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`options must be an object with reread, got ${show(options)}`);
  for (const key of Object.keys(options))
    if (!KNOWN.has(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  const {
    reread,
    verifyBatchBytes = 32 << 20,
    verifyMemoryBytes: memoryBytes,
    onProgress,
    threads: _t,
    batchBytes: _b,
    maxDocumentBytes: _m,
    ...dedupOptions
  } = options;
  const stream = checkStreamOptions(options);
  const verifyMemoryBytes = memoryBytes ?? setMemoryBytes(stream.threads);
  if (typeof reread !== 'function') throw new TypeError(`options.reread must be a function, got ${show(reread)}`);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new TypeError(`options.onProgress must be a function, got ${show(onProgress)}`);
  if (typeof verifyBatchBytes !== 'number' || !Number.isInteger(verifyBatchBytes) || verifyBatchBytes < 1)
    throw new RangeError(`verifyBatchBytes must be a positive integer, got ${show(verifyBatchBytes)}`);
  if (typeof verifyMemoryBytes !== 'number' || !Number.isInteger(verifyMemoryBytes) || verifyMemoryBytes < 0)
    throw new RangeError(`verifyMemoryBytes must be a non-negative integer, got ${show(verifyMemoryBytes)}`);
  const checked = checkDedupOptions(dedupOptions);
  const { k, bits, mode, verify, pairs: pairsMode, maxPairs, keep, hashOptions } = checked;
  const hashPlan = createSimHasher({ ...hashOptions, bits }).options;
  const progress = onProgress ?? (() => undefined);

  const words = bits === 128 ? 2 : 1;
  const source = new Column(new Uint32Array(0), (n) => new Uint32Array(n));
  const offset = new Column(new Float64Array(0), (n) => new Float64Array(n));
  const length = new Column(new Float64Array(0), (n) => new Float64Array(n));
  // Text lengths, kept only when the rule that picks each cluster's kept document needs them.
  const sizes = keep === 'first' ? null : new Column(new Float64Array(0), (n) => new Float64Array(n));
  const fps = new Column(new BigUint64Array(0), (n) => new BigUint64Array(n));
  const counts = new Column(new Float64Array(0), (n) => new Float64Array(n));
  const keys = new Column(new BigUint64Array(0), (n) => new BigUint64Array(n));
  let count = 0;
  let bytes = 0;
  async function* texts(): AsyncGenerator<string | Uint8Array> {
    for await (const doc of documents as AsyncIterable<StreamDocument>) {
      if (doc === null || typeof doc !== 'object')
        throw new TypeError(`document ${count} must be an object with text, got ${show(doc)}`);
      const size = checkedTextBytes(doc.text, count, stream.maxDocumentBytes);
      const at = count++;
      bytes += size;
      source.reserve(count);
      offset.reserve(count);
      length.reserve(count);
      source.data[at] = locatorField(doc.source, 'source', at, 0, 0xffffffff);
      offset.data[at] = locatorField(doc.offset, 'offset', at, at, Number.MAX_SAFE_INTEGER);
      length.data[at] = locatorField(doc.length, 'length', at, size, Number.MAX_SAFE_INTEGER);
      source.length = offset.length = length.length = count;
      if (sizes) {
        sizes.reserve(count);
        sizes.data[at] = doc.text.length;
        sizes.length = count;
      }
      yield doc.text;
    }
  }

  // The buffers of batches' sets that went to the spill file, for the next batches' sets (their pages mapped).
  const setsSpares: ArrayBuffer[] = [];
  // Documents without words compare by their trimmed text's hash (copy keys 2 and 3), known once all are hashed.
  let copyKeys = new BigUint64Array(0);
  const store = verify
    ? new SetStore(
        verifyMemoryBytes,
        await temporarySpill(),
        (i, j) => copyKeys[i * 4 + 2] === copyKeys[j * 4 + 2] && copyKeys[i * 4 + 3] === copyKeys[j * 4 + 3],
      )
    : null;
  try {
    const t0 = performance.now();
    for await (const batch of hashBatches(
      texts(),
      { ...hashOptions, bits, ...stream },
      true,
      verify ? verify.width : 0,
      setsSpares,
    )) {
      const n = batch.featureCounts.length;
      if (store && batch.sets) {
        const kept = store.append(indices(batch.first, n), batch.sets, fingerprintKeys(batch.fingerprints, words));
        // As many as the batches in flight can use.
        if (!kept && setsSpares.length < 2 * stream.threads) setsSpares.push(batch.sets.data.buffer as ArrayBuffer);
        if (store.backlogged) await store.drain();
      }
      keys.reserve((batch.first + n) * 4);
      keys.data.set(batch.copyKeys!, batch.first * 4);
      keys.length = (batch.first + n) * 4;
      fps.reserve((batch.first + n) * words);
      counts.reserve(batch.first + n);
      fps.data.set(batch.fingerprints, batch.first * words);
      counts.data.set(batch.featureCounts, batch.first);
      fps.length = (batch.first + n) * words;
      counts.length = batch.first + n;
      progress('hashing', counts.length, -1);
    }
    const fingerprints = fps.done();
    const featureCounts = counts.done();
    const locators = { source: source.done(), offset: offset.done(), length: length.done() };
    // Exact copies by their 128-bit content hash, each confirmed by reading it again with its first copy (as dedup()
    // compares the texts), then dedup()'s grouping.
    copyKeys = keys.done();
    const contentKeys = new BigUint64Array(count * 2);
    for (let i = 0; i < count; i++) {
      contentKeys[i * 2] = copyKeys[i * 4]!;
      contentKeys[i * 2 + 1] = copyKeys[i * 4 + 1]!;
    }
    const copyOf = firstOfEqual(contentKeys, 2);
    await confirmCopies(copyOf, { locators, reread, budget: verifyBatchBytes });
    const trim = featurelessByTrimmedText(hashPlan, verify)
      ? (i: number) => `${copyKeys[i * 4 + 2]!.toString(36)}:${copyKeys[i * 4 + 3]!.toString(36)}`
      : null;
    const groups = collapse(fingerprints, featureCounts, copyOf, words, trim);
    if (pairsMode === 'all' && groups.within > maxPairs) throw tooManyPairs(groups.within, maxPairs);
    await store?.arrange(); // every set in the file, arranged for the windows' reads, before verification reads any
    const t1 = performance.now();
    progress('joining', 0, 1);
    const fingerprintCount = groups.distinctFps.length / words;
    const spilled = (store?.spilledBytes ?? 0) > 0;
    const plan = planJoinFor(groups.distinctFps, fingerprintCount, k, bits, !spilled);
    const stage = { verify, mode, pairsMode, source: store, windowBytes: STORE_WINDOW_BYTES };
    // Connected clusters explained: a join of many pairs walks in chunks, each verified as it comes (the walk on a
    // worker beside this thread when threads > 1); otherwise the join runs first, on `threads` workers.
    const found = joinsInChunks(stage, fingerprintCount)
      ? await joinIfSmall(groups.distinctFps, plan, stream.threads, WHOLE_JOIN_PAIRS)
      : await findNearDuplicates(groups.distinctFps, { k, bits, threads: stream.threads });
    const beside =
      found === null && joinsInChunks(stage, fingerprintCount)
        ? await joinAndVerifyBeside(count, groups, plan, stage, stream.threads)
        : null;
    const joined = beside ?? joinedAndVerified(count, groups, plan, found, stage);
    progress('verifying', 1, 1);
    const t3 = performance.now();
    progress('clustering', 0, 1);
    return {
      ...dedupResult(groups, joined, {
        ...checked,
        fingerprints,
        featureCounts,
        lengthOf: (i) => sizes!.data[i]!,
        times: { start: t0, hashed: t1, joined: t3 },
      }),
      count,
      bytes,
      locators,
    };
  } finally {
    await store?.close();
  }
}

function locatorField(value: unknown, name: string, index: number, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    throw new RangeError(`document ${index}: ${name} must be an integer from 0 to ${max}, got ${show(value)}`);
  return value;
}
