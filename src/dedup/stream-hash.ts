// Fingerprints a stream of texts of any total size: texts are gathered into batches of about `batchBytes`, each
// batch is fingerprinted in one call (here, or in a pool worker when threads > 1), and the batches come out in
// input order. At most a few batches per thread are in flight, so memory holds batches, never the whole stream.
import { checkAttached, show } from '../errors.js';
import {
  MAX_DOCUMENT_BYTES,
  createSimHasher,
  fingerprintInWorker,
  readsStrings,
  utf8Length,
} from '../fingerprint/fingerprint.js';
import type { SimHashOptions } from '../fingerprint/options.js';
import { MAX_THREADS, sharedPool } from '../runtime/pool.js';
import { packTexts, transferOf } from '../runtime/pool-texts.js';
import { HASH_TASK, type HashResult, type HashTask, hashTexts } from './stream-tasks.js';
import { type WithSpare, keepSpare } from '../runtime/spare-buffers.js';
import { checkDocumentSize } from './document-size.js';

export { MAX_THREADS } from '../runtime/pool.js';

// The largest document (1 GiB of UTF-8) is the library's one limit, also for the streaming functions and the CLI.
export { MAX_DOCUMENT_BYTES, utf8Length } from '../fingerprint/fingerprint.js';

/** How a stream is batched and threaded; bad values throw TypeError or RangeError naming them. */
export interface StreamOptions {
  /**
   * Threads that fingerprint: 1 (default) works in this thread; more use that many Node worker threads, with
   * results identical to one thread. A tokenizer function cannot move to a worker: it runs here. (dedupStream also
   * joins on them with `mode: 'centre'` or `pairs: 'all'`; connected clusters explained walk the join in chunks on
   * two workers while this thread verifies them.)
   */
  threads?: number;
  /** Bytes of text per fingerprinting batch, 1 to 1 GiB (default 4 MiB); strings count one byte per UTF-16 unit. */
  batchBytes?: number;
  /** The largest document in bytes of UTF-8 (default and maximum MAX_DOCUMENT_BYTES); a larger one is a RangeError. */
  maxDocumentBytes?: number;
}

/**
 * One batch of simhashStream, in stream order: its documents' fingerprints and feature counts (typed-array
 * columns), and the stream position of its first document. copyKeys and sets are absent: only dedupStream's own batches carry them.
 */
export interface SimHashStreamBatch extends HashResult {
  /** The index (in stream order) of the batch's first document. */
  first: number;
}

export interface CheckedStreamOptions {
  threads: number;
  batchBytes: number;
  maxDocumentBytes: number;
}

export function checkStreamOptions(o: StreamOptions): CheckedStreamOptions {
  const { threads = 1, batchBytes = 4 << 20, maxDocumentBytes = MAX_DOCUMENT_BYTES } = o;
  const int = (value: unknown, name: string, min: number, max: number): number => {
    if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${show(value)}`);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${show(value)}`);
    return value;
  };
  return {
    threads: int(threads, 'threads', 1, MAX_THREADS),
    batchBytes: int(batchBytes, 'batchBytes', 1, 2 ** 30),
    maxDocumentBytes: int(maxDocumentBytes, 'maxDocumentBytes', 0, MAX_DOCUMENT_BYTES),
  };
}

/**
 * A text's size for batching, checked against the cap: its byte length, or for a string its length in UTF-16 units
 * (exact UTF-8 is counted only when a string could pass the cap: each unit is one to three bytes).
 */
export function checkedTextBytes(text: unknown, index: number, cap: number): number {
  if (typeof text === 'string') {
    // Each UTF-16 unit is at least one byte, at most three: count exactly only when it could matter.
    const bytes = text.length * 3 <= cap ? text.length : text.length > cap ? text.length : utf8Length(text);
    if (bytes > cap)
      throw new RangeError(`document ${index} has more than ${cap} bytes of UTF-8 (maxDocumentBytes): ${bytes}`);
    return bytes;
  }
  if (text instanceof Uint8Array) {
    if (text.length === 0) checkAttached(text, `document ${index}`);
    if (text.length > cap)
      throw new RangeError(`document ${index} has ${text.length} bytes, more than ${cap} (maxDocumentBytes)`);
    return text.length;
  }
  throw new TypeError(`document ${index} must be a string or a Uint8Array, got ${show(text)}`);
}

/**
 * Fingerprints of every text of `texts`, in batches in input order. Each text must be a string or UTF-8 bytes of
 * at most maxDocumentBytes. The fingerprints equal simhashMany's (one u64 per document, two for 128 bits).
 */
export function simhashStream(
  texts: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  options: SimHashOptions & StreamOptions = {},
): AsyncGenerator<SimHashStreamBatch, void, undefined> {
  return hashBatches(texts, options, false);
}

/**
 * simhashStream, with each batch's copy keys too when `copyKeys` (dedupStream's grouping), and its shingle sets of
 * `setsWidth` words per shingle when that is above 0 (dedupStream's verification). With `setsSpares`, sets are
 * copied into buffers taken from it where the caller has put some back (the buffers of batches it is done with).
 */
export async function* hashBatches(
  texts: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  options: SimHashOptions & StreamOptions,
  copyKeys: boolean,
  setsWidth = 0,
  setsSpares: ArrayBuffer[] | null = null,
): AsyncGenerator<SimHashStreamBatch, void, undefined> {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`options must be an object, got ${show(options)}`);
  const { threads: _t, batchBytes: _b, maxDocumentBytes: _m, ...hashOptions } = options;
  const o = checkStreamOptions(options);
  const { options: plan } = createSimHasher(hashOptions); // checks the options before anything is read
  if (texts === null || typeof texts !== 'object' || !(Symbol.asyncIterator in texts || Symbol.iterator in texts))
    throw new TypeError(`texts must be an iterable or async iterable, got ${show(texts)}`);
  const inline = o.threads === 1 || typeof hashOptions.tokenizer === 'function';
  const pool = inline ? undefined : sharedPool();
  const inFlight: Array<{ first: number; result: Promise<HashResult> }> = [];
  const maxInFlight = 2 * o.threads;
  let batch: Array<string | Uint8Array> = [];
  let size = 0;
  let index = 0;
  let submitted = 0;
  const submit = (last: boolean): void => {
    if (batch.length === 0) return;
    const first = index - batch.length;
    let result: Promise<HashResult>;
    const setsReuse = setsWidth > 0 && setsSpares ? { spare: setsSpares.pop() ?? null } : null;
    // Work of one batch in all is done here: starting a worker would cost more than it saves.
    if (!pool || (last && submitted === 0))
      result = Promise.resolve(hashTexts(batch, hashOptions, copyKeys, setsWidth, setsReuse));
    else {
      // dedupStream also needs each text's copy keys: the stream's own task computes both where the text is.
      if (copyKeys) {
        const task: HashTask = {
          texts: packTexts(batch, !readsStrings(plan)),
          options: hashOptions,
          copyKeys,
          setsWidth,
          ...(setsReuse ? { setsReuse } : {}),
        };
        const transfer = transferOf(task.texts);
        if (setsReuse?.spare) transfer.push(setsReuse.spare);
        result = pool.run<WithSpare<HashResult>>(HASH_TASK, task, o.threads, transfer).then(keepSpare);
      } else result = fingerprintInWorker(pool, batch, plan, o.threads);
      result.catch(() => undefined); // awaited below, in order; this only keeps it from counting as unhandled
    }
    inFlight.push({ first, result });
    submitted++;
    batch = [];
    size = 0;
  };
  for await (const text of texts) {
    size += checkedTextBytes(text, index, o.maxDocumentBytes);
    if (setsWidth > 0) checkDocumentSize(text, `document ${index}`, true);
    batch.push(text);
    index++;
    if (size >= o.batchBytes) {
      submit(false);
      while (inFlight.length >= maxInFlight) {
        const head = inFlight.shift()!;
        yield { first: head.first, ...(await head.result) };
      }
    }
  }
  submit(true);
  while (inFlight.length > 0) {
    const head = inFlight.shift()!;
    yield { first: head.first, ...(await head.result) };
  }
}
