// The fingerprint API: simhash, simhashMany, createSimHasher and friends. Inputs are classified and validated
// here; the plan's preset (presets/) reads feature lists, marshals each batch and runs its kernel, one
// WebAssembly call per batch and kind of input.
import { checkAttached, show } from '../errors.js';
import { align16, chunks, copyEncodedTexts, encodeStrings, encodeTexts, regions } from '../runtime/marshal.js';
import { type WorkerPool, checkThreads, hardwareThreads, sharedPool } from '../runtime/pool.js';
import { type PackedTexts, packTexts, transferOf, unpackTexts } from '../runtime/pool-texts.js';
import { type WithSpare, keepSpare } from '../runtime/spare-buffers.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { type Bits, type Feature, type Plan, type SimHashOptions, checkBits } from './options.js';
import { resolveOptions } from './plan.js';
import type { FeatureDoc, KernelOutput, PresetDefinition } from './presets/preset.js';
import { PRESETS } from './presets/presets.js';
import { jsFeatures } from './tokenize.js';

/** A document: text, UTF-8 bytes, a list of features (strings or [feature, weight] pairs), or a feature→weight map. */
export type SimHashInput = string | Uint8Array | readonly Feature[] | ReadonlyMap<string, number>;

/** One document's fingerprint and feature count (simhashDetailed, SimHasher.hashDetailed). */
export interface SimHashResult {
  /** The fingerprint; bit i of the bigint is bit i of the fingerprint. */
  fingerprint: bigint;
  /** How many features went in (occurrences, or entries of a weighted list); 0 means the document had none. */
  featureCount: number;
}

/** A batch's fingerprints and feature counts, as typed-array columns indexed by document. */
export interface SimHashBatch {
  /** One u64 per document (two for 128 bits: low word first). */
  fingerprints: BigUint64Array;
  /** Each document's feature count (as SimHashResult.featureCount): 0 for a document without features. */
  featureCounts: Float64Array;
}

/**
 * A hasher whose options were validated once (createSimHasher): the same fingerprints as the one-shot functions
 * with those options, without resolving them on every call. Bad inputs throw TypeError or RangeError naming them.
 */
export interface SimHasher {
  /** The resolved options (defaults filled in). */
  readonly options: Plan;
  /** The fingerprint of one document (as simhash). */
  hash(input: SimHashInput): bigint;
  /** The fingerprint of one document and its feature count (as simhashDetailed). */
  hashDetailed(input: SimHashInput): SimHashResult;
  /** One u64 per document, two for 128 bits, low word first (as simhashMany); `inputs` must be an array. */
  hashMany(inputs: readonly SimHashInput[]): BigUint64Array;
  /** The fingerprints and feature counts of a batch, as typed-array columns. */
  hashManyDetailed(inputs: readonly SimHashInput[]): SimHashBatch;
  /** hashMany on a pool of workers (see ThreadOptions); equal to hashMany for any thread count. */
  hashManyAsync(inputs: readonly SimHashInput[], options?: ThreadOptions): Promise<BigUint64Array>;
  /** hashManyDetailed on a pool of workers; equal to hashManyDetailed for any thread count. */
  hashManyDetailedAsync(inputs: readonly SimHashInput[], options?: ThreadOptions): Promise<SimHashBatch>;
}

/** How many pool workers an async batch uses. */
export interface ThreadOptions {
  /**
   * Workers that fingerprint the batch's texts (Node worker threads, or module Web Workers in browsers), in
   * contiguous chunks; results are identical to one thread. Default: the hardware's concurrency when the texts
   * add up to at least PARALLEL_MIN_BYTES, else 1 (this thread). 1 works in this thread. Feature lists and Maps
   * are hashed in this thread, and so is the whole batch when the tokenizer is a function (functions cannot
   * cross to a worker).
   */
  threads?: number;
}

interface FingerprintKernels {
  beginHashes(bits: number, weighted: number, features: number): void;
  addHashes(hashes: number, n: number, weights: number): void;
  endHashes(out: number): number;
  hashFeatures(bytes: number, featOffsets: number, n: number, seed: bigint, out: number, spec: number): void;
}

function kernels(rt: Runtime): FingerprintKernels {
  return rt.kernels as unknown as FingerprintKernels;
}

const decoder = new TextDecoder();

/**
 * Bytes one kernel call takes at most (UTF-8 text, or feature strings), estimated at 3 bytes per UTF-16 unit:
 * larger batches go through in pieces. This keeps every encodeInto target far below 2^31 bytes (Node 20's
 * encodeInto writes nothing into a larger view) and WebAssembly memory bounded whatever the batch's size.
 */
export const CHUNK_BYTES = 64 << 20;

/**
 * The largest single document, in UTF-8 bytes (or feature bytes): the text, plus the word tokenizers' scratch of
 * twice its size, must fit in WebAssembly's 4 GiB beside everything else the module holds.
 */
export const MAX_DOCUMENT_BYTES = 1 << 30;

/** Exact UTF-8 length of a string (lone surrogates count 3, as encodeInto writes U+FFFD). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

/** A text's size in bytes for chunking: exact for bytes, 3 per unit for strings (exact only when that matters). */
function textBytes(text: string | Uint8Array, position: () => string): number {
  if (typeof text !== 'string') return text.byteLength;
  const estimate = text.length * 3;
  if (estimate <= MAX_DOCUMENT_BYTES) return estimate;
  const bytes = utf8Length(text);
  if (bytes > MAX_DOCUMENT_BYTES) throw tooLarge(position(), bytes, 'bytes of UTF-8');
  return bytes;
}

/** A text given as bytes: attached, and no larger than one document may be. */
function checkView(view: Uint8Array, position: () => string): void {
  // A view reads as empty once its buffer is detached: only then is there anything to check (or name).
  if (view.byteLength === 0) checkAttached(view, position());
  if (view.byteLength > MAX_DOCUMENT_BYTES) throw tooLarge(position(), view.byteLength, 'bytes');
}

function tooLarge(position: string, bytes: number, what: string): RangeError {
  return new RangeError(
    `${position} has ${bytes} ${what}; one document may have at most ${MAX_DOCUMENT_BYTES} (1 GiB), so that it and ` +
      'its tokenizer scratch fit in WebAssembly memory (4 GiB)',
  );
}

/** The feature bytes a document sends to WebAssembly: its strings at 3 bytes per unit, offsets and weights. */
function featureBytes(doc: FeatureDoc): number {
  let units = 0;
  for (const s of doc.strings) units += s.length;
  return units * 3 + doc.strings.length * (doc.weights ? 12 : 4);
}

class Hasher implements SimHasher {
  readonly options: Plan;
  private readonly preset: PresetDefinition;
  private readonly words: number;
  /** Texts become strings when JavaScript tokenizes or normalizes them, or when the preset's kernel reads strings. */
  private readonly readsStrings: boolean;

  constructor(plan: Plan) {
    this.options = plan;
    this.preset = PRESETS[plan.preset];
    this.words = plan.bits === 128 ? 2 : 1;
    this.readsStrings = readsStrings(plan);
  }

  hash(input: SimHashInput): bigint {
    return this.hashDetailed(input).fingerprint;
  }

  hashDetailed(input: SimHashInput): SimHashResult {
    if ((typeof input === 'string' || input instanceof Uint8Array) && this.options.mode >= 0)
      return this.hashText(input);
    const { fingerprints, featureCounts } = this.run([input], 'input');
    const fingerprint = this.words === 2 ? (fingerprints[1]! << 64n) | fingerprints[0]! : fingerprints[0]!;
    return { fingerprint, featureCount: featureCounts[0]! };
  }

  /**
   * One text for a WebAssembly tokenizer, the usual one-shot call: the same checks and kernel call as a batch of
   * one, with the result read straight from WebAssembly memory. The batch's arrays, slices and copies took about
   * 2 µs per call, several times the kernel's time for a short text.
   */
  private hashText(input: string | Uint8Array): SimHashResult {
    const rt = wasm();
    const text = this.prepareText(input, () => 'input', false);
    textBytes(text, () => 'input');
    const { out, counts } = this.preset.runTexts(rt, [text], this.options);
    const u64 = rt.heap.u64;
    const lo = u64[out >>> 3]!;
    const fingerprint = this.words === 2 ? (u64[(out >>> 3) + 1]! << 64n) | lo : lo;
    return { fingerprint, featureCount: rt.heap.f64[counts >>> 3]! };
  }

  hashMany(inputs: readonly SimHashInput[]): BigUint64Array {
    return this.hashManyDetailed(inputs).fingerprints;
  }

  hashManyDetailed(inputs: readonly SimHashInput[]): SimHashBatch {
    if (!Array.isArray(inputs)) throw new TypeError(`inputs must be an array, got ${show(inputs)}`);
    return this.run(inputs, 'document');
  }

  async hashManyAsync(inputs: readonly SimHashInput[], options?: ThreadOptions): Promise<BigUint64Array> {
    return (await this.hashManyDetailedAsync(inputs, options)).fingerprints;
  }

  async hashManyDetailedAsync(inputs: readonly SimHashInput[], options: ThreadOptions = {}): Promise<SimHashBatch> {
    if (!Array.isArray(inputs)) throw new TypeError(`inputs must be an array, got ${show(inputs)}`);
    const chosen = checkThreadOptions(options);
    if (typeof this.options.tokenizer === 'function') return this.run(inputs, 'document');
    const n = inputs.length;
    const fingerprints = new BigUint64Array(n * this.words);
    const featureCounts = new Float64Array(n);
    // Everything is validated (and feature lists hashed) here, before any worker gets work. A batch of texts only
    // (the usual case) is checked in one pass that builds nothing per document.
    let texts = inputs as ReadonlyArray<string | Uint8Array>;
    let textIndex: number[] | null = null; // null: text i is input i
    let sizes = textsOnlyWork(inputs);
    if (sizes === null) {
      const batch = this.classify(inputs, (i) => `document ${i}`, true);
      this.execute(wasm(), { ...batch, texts: [], textIndex: [], textSizes: [] }, fingerprints, featureCounts);
      ({ texts, textIndex } = batch);
      sizes = Float64Array.from(texts, workOf);
    }
    let total = 0;
    for (let i = 0; i < sizes.length; i++) total += sizes[i]!;
    // Starting workers costs tens of milliseconds: until they run, only a larger batch pays for it.
    const warm = sharedPool().size >= hardwareThreads();
    const threads = chosen ?? (total >= (warm ? PARALLEL_MIN_BYTES : PARALLEL_COLD_MIN_BYTES) ? hardwareThreads() : 1);
    if (texts.length === 0) return { fingerprints, featureCounts };
    const place = (r: SimHashBatch, start: number, end: number): void => {
      if (textIndex)
        this.scatter(r.fingerprints, r.featureCounts, textIndex.slice(start, end), fingerprints, featureCounts);
      else {
        fingerprints.set(r.fingerprints, start * this.words);
        featureCounts.set(r.featureCounts, start);
      }
    };
    if (threads === 1) {
      place(this.runTexts(texts, textIndex ? Uint32Array.from(textIndex) : 0), 0, texts.length);
      return { fingerprints, featureCounts };
    }
    // At most two chunks per thread are packed (copied) at a time, so memory holds a few chunks, never the batch
    // once more per worker.
    const runs = shrinkingChunks(sizes, threads);
    const pool = sharedPool();
    const failures: Array<{ run: number; error: unknown }> = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < runs.length && failures.length === 0) {
        const run = next++;
        const [start, end] = runs[run]!;
        try {
          const positions = textIndex ? Uint32Array.from(textIndex.slice(start, end)) : start;
          place(await fingerprintInWorker(pool, texts.slice(start, end), this.options, threads, positions), start, end);
        } catch (error) {
          failures.push({ run, error });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(runs.length, 2 * threads) }, lane));
    // The first failing chunk's error, whichever finished first: the one a single thread would have thrown.
    if (failures.length > 0) throw failures.reduce((a, b) => (b.run < a.run ? b : a)).error;
    return { fingerprints, featureCounts };
  }

  /**
   * A pool worker's chunk packed as UTF-8 (every text was, see packTexts) for a kernel that reads UTF-8: one copy
   * into WebAssembly, no per-document view. Null when the chunk or the kernel is not of that kind.
   */
  runPacked(packed: PackedTexts): SimHashBatch | null {
    const { preset } = this;
    if (packed.strings !== null || this.readsStrings || !preset.runEncodedTexts || packed.bytes.length > CHUNK_BYTES)
      return null;
    const rt = wasm();
    const n = packed.offsets.length - 1;
    const encoded = copyEncodedTexts(rt.heap, regions(rt).text, packed.bytes, packed.offsets);
    const output = preset.runEncodedTexts(rt, encoded, this.options);
    return {
      fingerprints: rt.heap.u64.slice(output.out >>> 3, (output.out >>> 3) + n * this.words),
      featureCounts: rt.heap.f64.slice(output.counts >>> 3, (output.counts >>> 3) + n),
    };
  }

  /** Texts of a batch, named by their positions in it (for errors); in a pool worker, or here. */
  runTexts(texts: ReadonlyArray<string | Uint8Array>, positions: Positions = 0): SimHashBatch {
    const name =
      typeof positions === 'number'
        ? (i: number) => `document ${positions + i}`
        : (i: number) => `document ${positions[i]}`;
    const n = texts.length;
    const fingerprints = new BigUint64Array(n * this.words);
    const featureCounts = new Float64Array(n);
    this.execute(wasm(), this.classify(texts, name, false), fingerprints, featureCounts);
    return { fingerprints, featureCounts };
  }

  private run(inputs: readonly SimHashInput[], what: string): SimHashBatch {
    const n = inputs.length;
    const name = (i: number): string => (n === 1 && what === 'input' ? what : `${what} ${i}`);
    const fingerprints = new BigUint64Array(n * this.words);
    const featureCounts = new Float64Array(n);
    this.execute(wasm(), this.classify(inputs, name, false), fingerprints, featureCounts);
    return { fingerprints, featureCounts };
  }

  /**
   * A text input checked (attached, not too large as bytes) and, unless `rawTexts` (a worker does the rest),
   * decoded where the kernel reads strings and normalized: what classify and hashText give the kernel.
   */
  private prepareText(input: string | Uint8Array, position: () => string, rawTexts: boolean): string | Uint8Array {
    let text = input;
    if (typeof text !== 'string') checkView(text, position);
    if (rawTexts) return text;
    const { normalize } = this.options;
    if (this.readsStrings && typeof text !== 'string') text = decoder.decode(text);
    if (normalize && typeof text === 'string') text = text.normalize(normalize);
    return text;
  }

  /**
   * Validates and sorts a batch into texts and feature lists; `position(i)` names input i in errors. With
   * `rawTexts`, texts are only checked (type, size), not decoded, normalized or tokenized: a worker does that.
   */
  private classify(inputs: readonly SimHashInput[], position: (i: number) => string, rawTexts: boolean): Classified {
    const plan = this.options;
    const preset = this.preset;
    const n = inputs.length;
    const texts: Array<string | Uint8Array> = [];
    const textIndex: number[] = [];
    const textSizes: number[] = [];
    const featureDocs: FeatureDoc[] = [];
    const featureSizes: number[] = [];
    const addFeatures = (doc: FeatureDoc): void => {
      const bytes = featureBytes(doc);
      if (bytes > MAX_DOCUMENT_BYTES) throw tooLarge(position(doc.index), bytes, 'bytes of features');
      featureDocs.push(doc);
      featureSizes.push(bytes);
    };
    // Classify and validate everything before any of it reaches WebAssembly.
    for (let i = 0; i < n; i++) {
      const input = inputs[i];
      if (typeof input === 'string' || input instanceof Uint8Array) {
        const text = this.prepareText(input, () => position(i), rawTexts);
        if (!rawTexts && plan.mode < 0) {
          addFeatures(preset.collectFeatures(jsFeatures(text as string, plan), i, false));
        } else {
          textSizes.push(textBytes(text, () => position(i)));
          texts.push(text);
          textIndex.push(i);
        }
      } else if (Array.isArray(input)) {
        addFeatures(preset.collectFeatures(input, i, plan.normalize));
      } else if (input instanceof Map) {
        addFeatures(preset.mapFeatures(input, i, plan.normalize));
      } else {
        throw new TypeError(
          `${position(i)} must be a string, a Uint8Array, an array of features or a Map, got ${show(input)}`,
        );
      }
    }
    return { texts, textIndex, textSizes, featureDocs, featureSizes };
  }

  /** Runs the kernels on a classified batch, writing each document's results at its own position. */
  private execute(rt: Runtime, batch: Classified, fingerprints: BigUint64Array, featureCounts: Float64Array): void {
    const { preset, options: plan } = this;
    const { texts, textIndex, textSizes, featureDocs, featureSizes } = batch;
    for (const [start, end] of chunks(textSizes, CHUNK_BYTES)) {
      const output = preset.runTexts(rt, texts.slice(start, end), plan);
      this.collect(rt, output, textIndex.slice(start, end), fingerprints, featureCounts);
    }
    for (const [start, end] of chunks(featureSizes, CHUNK_BYTES)) {
      const docs = featureDocs.slice(start, end);
      const output = preset.runFeatures(rt, docs, plan);
      this.collect(
        rt,
        output,
        docs.map((d) => d.index),
        fingerprints,
        featureCounts,
      );
    }
  }

  /** Copies a kernel's results to the caller's positions `index` (documents of one kind, in batch order). */
  private collect(rt: Runtime, output: KernelOutput, index: number[], fps: BigUint64Array, counts: Float64Array): void {
    const n = index.length;
    const o = output.out >>> 3;
    const c = output.counts >>> 3;
    const fromFps = rt.heap.u64.subarray(o, o + n * this.words);
    this.scatter(fromFps, rt.heap.f64.subarray(c, c + n), index, fps, counts);
  }

  /** Copies results of documents `index` (in order) from `fromFps`/`fromCounts` to their positions. */
  private scatter(
    fromFps: BigUint64Array,
    fromCounts: Float64Array,
    index: readonly number[],
    fps: BigUint64Array,
    counts: Float64Array,
  ): void {
    const words = this.words;
    const n = index.length;
    if (n === 0) return;
    const first = index[0]!;
    if (index[n - 1] === first + n - 1) {
      // Consecutive positions (every batch of one kind of input): two block copies.
      fps.set(fromFps.subarray(0, n * words), first * words);
      counts.set(fromCounts.subarray(0, n), first);
      return;
    }
    for (let i = 0; i < n; i++) {
      const at = index[i]!;
      for (let w = 0; w < words; w++) fps[at * words + w] = fromFps[i * words + w]!;
      counts[at] = fromCounts[i]!;
    }
  }
}

interface Classified {
  texts: Array<string | Uint8Array>;
  /** Each text's position in the batch. */
  textIndex: number[];
  textSizes: number[];
  featureDocs: FeatureDoc[];
  featureSizes: number[];
}

/**
 * Bytes of text (a string's UTF-16 units count as bytes) from which simhashManyAsync uses every core by default,
 * once the pool's workers run: below it, a worker's round trip and the copy cost more than the second core saves
 * (bench/threads.bench.ts measures the cut-over). Before the workers run, a batch must be PARALLEL_COLD_MIN_BYTES
 * to pay for starting them (tens of milliseconds each).
 */
export const PARALLEL_MIN_BYTES = 4 << 20;
export const PARALLEL_COLD_MIN_BYTES = 32 << 20;
/** What one document adds to a chunk beside its text (its result, its place in the task). */
const DOCUMENT_OVERHEAD_BYTES = 64;
const MIN_CHUNK_BYTES = 256 << 10;
const MAX_CHUNK_BYTES = 4 << 20;

/** A text's share of the work, about proportional to its length (bytes, or UTF-16 units of a string). */
const workOf = (text: string | Uint8Array): number => text.length + DOCUMENT_OVERHEAD_BYTES;

/**
 * Each input's work when every input is a text, validated as classify validates texts; null when some input is
 * not a text (classify then sorts the batch).
 */
function textsOnlyWork(inputs: readonly SimHashInput[]): Float64Array | null {
  const work = new Float64Array(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const t = inputs[i];
    if (typeof t === 'string') {
      if (t.length * 3 > MAX_DOCUMENT_BYTES) textBytes(t, () => `document ${i}`);
    } else if (t instanceof Uint8Array) checkView(t, () => `document ${i}`);
    else return null;
    work[i] = workOf(t);
  }
  return work;
}

/**
 * Contiguous runs of texts for `threads` workers, each about 1/(2 threads) of the work still left (within
 * MIN_CHUNK_BYTES..MAX_CHUNK_BYTES): large while much is left, so few round trips, and small at the end, so the
 * workers finish together rather than one waiting on another's last large chunk.
 */
export function shrinkingChunks(work: ArrayLike<number>, threads: number): Array<[number, number]> {
  return chunks(work, (left) => Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, left / (2 * threads))));
}

/** Where a batch's texts stand in the caller's batch: each one's position, or the first of consecutive ones. */
type Positions = Uint32Array | number;

/** The pool task that fingerprints texts (simhashManyAsync, simhashStream). */
export const FINGERPRINT_TASK = 'fingerprint';

export interface FingerprintTask {
  texts: PackedTexts;
  /** The hasher's plan, validated on the calling thread. */
  plan: Plan;
  /** The texts' positions in the caller's batch, which errors name; default 0, 1, … */
  positions?: Positions;
}

offerTasks({
  [FINGERPRINT_TASK]: (task: FingerprintTask) => {
    const hasher = new Hasher(task.plan);
    const r = hasher.runPacked(task.texts) ?? hasher.runTexts(unpackTexts(task.texts), task.positions);
    const spare = task.texts.bytes.buffer as ArrayBuffer;
    const result: WithSpare<SimHashBatch> = { value: r, spare };
    return { result, transfer: [r.fingerprints.buffer as ArrayBuffer, r.featureCounts.buffer as ArrayBuffer, spare] };
  },
});

/** Whether a plan's kernel reads texts as strings (JavaScript tokenizes or normalizes them, or the preset wants them). */
export function readsStrings(plan: Plan): boolean {
  return plan.mode < 0 || plan.normalize !== false || PRESETS[plan.preset].textsAsStrings;
}

/**
 * Fingerprints texts in a pool worker with a plan validated here; `positions` name them in errors. Texts the
 * kernel reads as UTF-8 cross as UTF-8 (see packTexts), and their buffer comes back for the next pack.
 */
export async function fingerprintInWorker(
  pool: WorkerPool,
  texts: ReadonlyArray<string | Uint8Array>,
  plan: Plan,
  threads: number,
  positions?: Positions,
): Promise<SimHashBatch> {
  const task: FingerprintTask = { texts: packTexts(texts, !readsStrings(plan)), plan };
  if (positions !== undefined) task.positions = positions;
  return keepSpare(await pool.run<WithSpare<SimHashBatch>>(FINGERPRINT_TASK, task, threads, transferOf(task.texts)));
}

function checkThreadOptions(options: unknown): number | undefined {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`options must be an object, got ${show(options)}`);
  for (const key of Object.keys(options))
    if (key !== 'threads') throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  return checkThreads((options as ThreadOptions).threads);
}

/**
 * A hasher with validated options, for repeated calls: options are resolved once, not per call. Throws TypeError
 * or RangeError for bad options.
 *
 * @example
 * ```ts
 * import { createSimHasher, init } from 'simhash-wasm';
 *
 * await init();
 * const hasher = createSimHasher({ bits: 128, tokenizer: 'words' });
 * const fp: bigint = hasher.hash('The quick brown fox');
 * const { fingerprints, featureCounts } = hasher.hashManyDetailed(['one text', 'another text']);
 * // 128 bits: document i is (fingerprints[2i + 1] << 64n) | fingerprints[2i]
 * ```
 */
export function createSimHasher(options?: SimHashOptions): SimHasher {
  return new Hasher(resolveOptions(options));
}

/** The hasher of the default options, made once: one-shot calls without options skip resolving them again. */
let defaultHasher: Hasher | undefined;

function oneShotHasher(options: SimHashOptions | undefined): SimHasher {
  if (options !== undefined) return createSimHasher(options);
  defaultHasher ??= new Hasher(resolveOptions(undefined));
  return defaultHasher;
}

/**
 * The fingerprint of one document (64 bits unless `options.bits` says otherwise); a document without features
 * hashes to 0n. Needs `await init()` first. Throws TypeError or RangeError for bad input or options.
 *
 * @example
 * ```ts
 * import { hammingDistance, init, simhash, toHex } from 'simhash-wasm';
 *
 * await init();
 * const a = simhash('The quick brown fox jumps over the lazy dog');
 * const b = simhash('The quick brown fox jumped over the lazy dog');
 * hammingDistance(a, b); // small for near-duplicates; about 32 of 64 for unrelated texts
 * toHex(a); // 16 hex digits
 * ```
 */
export function simhash(input: SimHashInput, options?: SimHashOptions): bigint {
  return oneShotHasher(options).hash(input);
}

/** The fingerprint of one document and how many features went into it. */
export function simhashDetailed(input: SimHashInput, options?: SimHashOptions): SimHashResult {
  return oneShotHasher(options).hashDetailed(input);
}

/**
 * Fingerprints of many documents in one WebAssembly call per kind of input: one u64 per document, or two at 128
 * bits (low word first). Large batches go through in pieces of at most 64 MiB, with the same results.
 *
 * @example
 * ```ts
 * import { init, simhashMany } from 'simhash-wasm';
 *
 * await init();
 * const fps: BigUint64Array = simhashMany(['first text', 'second text', 'third text']);
 * const wide = simhashMany(['first text', 'second text'], { bits: 128 });
 * const second = (wide[3]! << 64n) | wide[2]!; // document 1 at 128 bits
 * ```
 */
export function simhashMany(inputs: readonly SimHashInput[], options?: SimHashOptions): BigUint64Array {
  return createSimHasher(options).hashMany(inputs);
}

/**
 * simhashMany on a pool of workers created once (Node worker threads, or module Web Workers in browsers): the
 * batch's texts are fingerprinted in contiguous chunks and put back by index, so the result equals simhashMany's
 * for any thread count. Bad input rejects before any worker gets work. See ThreadOptions for the default.
 */
export function simhashManyAsync(
  inputs: readonly SimHashInput[],
  options: SimHashOptions & ThreadOptions = {},
): Promise<BigUint64Array> {
  try {
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw new TypeError(`options must be an object, got ${show(options)}`);
    const { threads, ...hashOptions } = options;
    return createSimHasher(hashOptions).hashManyAsync(inputs, threads === undefined ? {} : { threads });
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Options of simhashOfHashes. */
export interface HashesOptions {
  /** Width of the hashes and of the fingerprint (default 64); at 128 bits each hash is two words, low first. */
  bits?: Bits;
  /** One finite weight per feature; default 1 each. */
  weights?: Float64Array;
}

/** The index of the first weight that is NaN or infinite, or -1. */
function firstNonFinite(weights: Float64Array): number {
  // x * 0 is 0 for every finite x and NaN otherwise: four chains of adds find out at about 1 ns per weight.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const end = weights.length & ~3;
  for (let i = 0; i < end; i += 4) {
    s0 += weights[i]! * 0;
    s1 += weights[i + 1]! * 0;
    s2 += weights[i + 2]! * 0;
    s3 += weights[i + 3]! * 0;
  }
  for (let i = end; i < weights.length; i++) s0 += weights[i]! * 0;
  if (s0 + s1 + s2 + s3 === 0) return -1;
  return weights.findIndex((w) => !Number.isFinite(w));
}

/** Features per chunk of simhashOfHashes: 64 Ki hashes and weights, 1 MiB at 64 bits, fit the L2 cache. */
const HASHES_CHUNK = 1 << 16;

/**
 * The fingerprint of precomputed feature hashes (`bits` 64 or 32: one u64 each; 128: two, low word first),
 * reduced exactly as the default spec reduces its own feature hashes.
 */
export function simhashOfHashes(hashes: BigUint64Array, options: HashesOptions = {}): bigint {
  if (!(hashes instanceof BigUint64Array)) throw new TypeError(`hashes must be a BigUint64Array, got ${show(hashes)}`);
  const bits = checkBits(options.bits ?? 64);
  const words = bits === 128 ? 2 : 1;
  if (hashes.length % words !== 0)
    throw new RangeError(`128-bit hashes need two words each, got ${hashes.length} words`);
  const n = hashes.length / words;
  const weights = options.weights;
  if (weights !== undefined) {
    if (!(weights instanceof Float64Array)) throw new TypeError(`weights must be a Float64Array, got ${show(weights)}`);
    if (weights.length !== n)
      throw new RangeError(`weights must have one entry per hash (${n}), got ${weights.length}`);
    const bad = firstNonFinite(weights);
    if (bad >= 0) throw new RangeError(`weights[${bad}] must be finite, got ${weights[bad]}`);
  }
  // In chunks that stay in cache between the copy and the kernel, so any number of hashes fits in a small
  // region; a weighted document may need a second pass over the same chunks (assembly/weighted-tables.ts).
  const rt = wasm();
  const chunk = Math.min(n, HASHES_CHUNK);
  const hashBytes = align16(chunk * words * 8);
  const ptr = regions(rt).work.reserve(hashBytes + (weights ? chunk * 8 : 0) + 16);
  const weightsAt = weights ? ptr + hashBytes : 0;
  const out = weights ? weightsAt + chunk * 8 : ptr + hashBytes;
  const k = kernels(rt);
  k.beginHashes(bits, weights ? 1 : 0, n);
  do {
    for (let at = 0; at < n; at += chunk) {
      const m = Math.min(chunk, n - at);
      rt.heap.u64.set(hashes.subarray(at * words, (at + m) * words), ptr >>> 3);
      if (weights) rt.heap.f64.set(weights.subarray(at, at + m), weightsAt >>> 3);
      k.addHashes(ptr, m, weightsAt);
    }
  } while (k.endHashes(out) !== 0);
  const u64 = rt.heap.u64;
  return words === 2 ? (u64[(out >>> 3) + 1]! << 64n) | u64[out >>> 3]! : u64[out >>> 3]!;
}

/** The presets whose feature hash featureHash gives: the default spec's versions. */
export type SpecPreset = 'default' | 'simhash-wasm/2' | 'simhash-wasm/1';

/**
 * The hash of one feature (its UTF-8 bytes, or the bytes given) under a version of the default spec
 * (docs/spec.md; seed 0, and at 128 bits seed 1 gives the high word): what a word or a feature-list entry adds
 * to the counters. Shingles are hashed from their words' hashes, not from bytes.
 */
export function featureHash(feature: string | Uint8Array, bits: Bits = 64, preset: SpecPreset = 'default'): bigint {
  checkBits(bits);
  if (typeof feature !== 'string' && !(feature instanceof Uint8Array)) {
    throw new TypeError(`feature must be a string or a Uint8Array, got ${show(feature)}`);
  }
  const spec = typeof preset === 'string' && Object.hasOwn(PRESETS, preset) ? PRESETS[preset as SpecPreset].spec : 0;
  if (spec === 0) {
    throw new RangeError(`preset must be 'default', 'simhash-wasm/2' or 'simhash-wasm/1', got ${show(preset)}`);
  }
  const rt = wasm();
  const r = regions(rt);
  const enc =
    typeof feature === 'string' ? encodeStrings(rt.heap, r.text, [feature]) : encodeTexts(rt.heap, r.text, [feature]);
  const work = r.work.reserve(32);
  rt.heap.u32.set(enc.offsets, work >>> 2);
  kernels(rt).hashFeatures(enc.ptr, work, 1, 0n, work + 16, spec);
  const lo = rt.heap.u64[(work + 16) >>> 3]!;
  if (bits === 32) return lo & 0xffffffffn;
  if (bits === 64) return lo;
  kernels(rt).hashFeatures(enc.ptr, work, 1, 1n, work + 16, spec);
  return (rt.heap.u64[(work + 16) >>> 3]! << 64n) | lo;
}
