// The fingerprint API: simhash, simhashMany, createSimHasher and friends. Inputs are classified and validated
// here; the plan's preset (presets/) reads feature lists, marshals each batch and runs its kernel, one
// WebAssembly call per batch and kind of input.
import { checkAttached, show } from '../errors.js';
import { align16, encodeStrings, encodeTexts, regions } from '../runtime/marshal.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { type Bits, type Feature, type Plan, type SimHashOptions, checkBits, resolveOptions } from './options.js';
import type { FeatureDoc, KernelOutput, PresetDefinition } from './presets/preset.js';
import { PRESETS } from './presets/presets.js';
import { jsFeatures } from './tokenize.js';

/** A document: text, UTF-8 bytes, a list of features (strings or [feature, weight] pairs), or a feature→weight map. */
export type SimHashInput = string | Uint8Array | readonly Feature[] | ReadonlyMap<string, number>;

export interface SimHashResult {
  /** The fingerprint; bit i of the bigint is bit i of the fingerprint. */
  fingerprint: bigint;
  /** How many features went in (occurrences, or entries of a weighted list); 0 means the document had none. */
  featureCount: number;
}

export interface SimHashBatch {
  /** One u64 per document (two for 128 bits: low word first). */
  fingerprints: BigUint64Array;
  featureCounts: Float64Array;
}

export interface SimHasher {
  /** The resolved options (defaults filled in). */
  readonly options: Plan;
  hash(input: SimHashInput): bigint;
  hashDetailed(input: SimHashInput): SimHashResult;
  hashMany(inputs: readonly SimHashInput[]): BigUint64Array;
  hashManyDetailed(inputs: readonly SimHashInput[]): SimHashBatch;
}

interface FingerprintKernels {
  fingerprintHashes(hashes: number, n: number, weights: number, bits: number, out: number): void;
  hashFeatures(bytes: number, featOffsets: number, n: number, seed: bigint, out: number): void;
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
function textBytes(text: string | Uint8Array, position: string): number {
  if (typeof text !== 'string') return text.byteLength;
  const estimate = text.length * 3;
  if (estimate <= MAX_DOCUMENT_BYTES) return estimate;
  const bytes = utf8Length(text);
  if (bytes > MAX_DOCUMENT_BYTES) throw tooLarge(position, bytes, 'bytes of UTF-8');
  return bytes;
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

/** Splits positions 0..sizes.length-1 into consecutive runs of at most CHUNK_BYTES (a larger item goes alone). */
function chunks(sizes: readonly number[]): Array<[start: number, end: number]> {
  const runs: Array<[number, number]> = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i > start && bytes + sizes[i]! > CHUNK_BYTES) {
      runs.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += sizes[i]!;
  }
  if (start < sizes.length) runs.push([start, sizes.length]);
  return runs;
}

class Hasher implements SimHasher {
  readonly options: Plan;
  private readonly preset: PresetDefinition;
  private readonly words: number;

  constructor(plan: Plan) {
    this.options = plan;
    this.preset = PRESETS[plan.preset];
    this.words = plan.bits === 128 ? 2 : 1;
  }

  hash(input: SimHashInput): bigint {
    return this.hashDetailed(input).fingerprint;
  }

  hashDetailed(input: SimHashInput): SimHashResult {
    const { fingerprints, featureCounts } = this.run([input], 'input');
    const fingerprint = this.words === 2 ? (fingerprints[1]! << 64n) | fingerprints[0]! : fingerprints[0]!;
    return { fingerprint, featureCount: featureCounts[0]! };
  }

  hashMany(inputs: readonly SimHashInput[]): BigUint64Array {
    return this.hashManyDetailed(inputs).fingerprints;
  }

  hashManyDetailed(inputs: readonly SimHashInput[]): SimHashBatch {
    if (!Array.isArray(inputs)) throw new TypeError(`inputs must be an array, got ${show(inputs)}`);
    return this.run(inputs, 'document');
  }

  private run(inputs: readonly SimHashInput[], what: string): SimHashBatch {
    const rt = wasm();
    const plan = this.options;
    const preset = this.preset;
    const n = inputs.length;
    const texts: Array<string | Uint8Array> = [];
    const textIndex: number[] = [];
    const textSizes: number[] = [];
    const featureDocs: FeatureDoc[] = [];
    const featureSizes: number[] = [];
    const position = (i: number): string => (n === 1 && what === 'input' ? what : `${what} ${i}`);
    const addFeatures = (doc: FeatureDoc): void => {
      const bytes = featureBytes(doc);
      if (bytes > MAX_DOCUMENT_BYTES) throw tooLarge(position(doc.index), bytes, 'bytes of features');
      featureDocs.push(doc);
      featureSizes.push(bytes);
    };
    // Texts become strings when JavaScript tokenizes or normalizes them, or when the preset's kernel reads strings.
    const asString = plan.mode < 0 || plan.normalize !== false || preset.textsAsStrings;
    // Classify and validate everything before any of it reaches WebAssembly.
    for (let i = 0; i < n; i++) {
      const input = inputs[i];
      if (typeof input === 'string' || input instanceof Uint8Array) {
        let text: string | Uint8Array = input;
        if (typeof text !== 'string') {
          checkAttached(text, position(i));
          if (text.byteLength > MAX_DOCUMENT_BYTES) throw tooLarge(position(i), text.byteLength, 'bytes');
        }
        if (asString && typeof text !== 'string') text = decoder.decode(text);
        if (plan.normalize && typeof text === 'string') text = text.normalize(plan.normalize);
        if (plan.mode < 0) {
          addFeatures(preset.collectFeatures(jsFeatures(text as string, plan), i, false));
        } else {
          textSizes.push(textBytes(text, position(i)));
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
    const fingerprints = new BigUint64Array(n * this.words);
    const featureCounts = new Float64Array(n);
    for (const [start, end] of chunks(textSizes)) {
      const output = preset.runTexts(rt, texts.slice(start, end), plan);
      this.collect(rt, output, textIndex.slice(start, end), fingerprints, featureCounts);
    }
    for (const [start, end] of chunks(featureSizes)) {
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
    return { fingerprints, featureCounts };
  }

  /** Copies a kernel's results to the caller's positions `index` (documents of one kind, in batch order). */
  private collect(rt: Runtime, output: KernelOutput, index: number[], fps: BigUint64Array, counts: Float64Array): void {
    const words = this.words;
    const n = index.length;
    const u64 = rt.heap.u64;
    const f64 = rt.heap.f64;
    const o = output.out >>> 3;
    const c = output.counts >>> 3;
    const first = index[0]!;
    if (index[n - 1] === first + n - 1) {
      // Consecutive positions (every batch of one kind of input): two block copies.
      fps.set(u64.subarray(o, o + n * words), first * words);
      counts.set(f64.subarray(c, c + n), first);
      return;
    }
    for (let i = 0; i < n; i++) {
      const at = index[i]!;
      for (let w = 0; w < words; w++) fps[at * words + w] = u64[o + i * words + w]!;
      counts[at] = f64[c + i]!;
    }
  }
}

/** A hasher with validated options, for repeated calls. */
export function createSimHasher(options?: SimHashOptions): SimHasher {
  return new Hasher(resolveOptions(options));
}

/** The fingerprint of one document. */
export function simhash(input: SimHashInput, options?: SimHashOptions): bigint {
  return createSimHasher(options).hash(input);
}

/** The fingerprint of one document and how many features went into it. */
export function simhashDetailed(input: SimHashInput, options?: SimHashOptions): SimHashResult {
  return createSimHasher(options).hashDetailed(input);
}

/** Fingerprints of many documents in one WebAssembly call per kind of input; 128-bit: low word first. */
export function simhashMany(inputs: readonly SimHashInput[], options?: SimHashOptions): BigUint64Array {
  return createSimHasher(options).hashMany(inputs);
}

export interface HashesOptions {
  bits?: Bits;
  /** One finite weight per feature; default 1 each. */
  weights?: Float64Array;
}

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
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(weights[i]!)) throw new RangeError(`weights[${i}] must be finite, got ${weights[i]}`);
    }
  }
  const rt = wasm();
  const r = regions(rt);
  const hashBytes = align16(hashes.byteLength);
  const weightBytes = weights ? align16(weights.byteLength) : 0;
  const ptr = r.work.reserve(hashBytes + weightBytes + 16);
  rt.heap.u64.set(hashes, ptr >>> 3);
  if (weights) rt.heap.f64.set(weights, (ptr + hashBytes) >>> 3);
  const out = ptr + hashBytes + weightBytes;
  kernels(rt).fingerprintHashes(ptr, n, weights ? ptr + hashBytes : 0, bits, out);
  const u64 = rt.heap.u64;
  return words === 2 ? (u64[(out >>> 3) + 1]! << 64n) | u64[out >>> 3]! : u64[out >>> 3]!;
}

/**
 * The default spec's hash of one feature: XXH3-64 of its UTF-8 bytes (seed 0; at 128 bits, seed 1 gives the high
 * word).
 */
export function featureHash(feature: string | Uint8Array, bits: Bits = 64): bigint {
  checkBits(bits);
  if (typeof feature !== 'string' && !(feature instanceof Uint8Array)) {
    throw new TypeError(`feature must be a string or a Uint8Array, got ${show(feature)}`);
  }
  const rt = wasm();
  const r = regions(rt);
  const enc =
    typeof feature === 'string' ? encodeStrings(rt.heap, r.text, [feature]) : encodeTexts(rt.heap, r.text, [feature]);
  const work = r.work.reserve(32);
  rt.heap.u32.set(enc.offsets, work >>> 2);
  kernels(rt).hashFeatures(enc.ptr, work, 1, 0n, work + 16);
  const lo = rt.heap.u64[(work + 16) >>> 3]!;
  if (bits === 32) return lo & 0xffffffffn;
  if (bits === 64) return lo;
  kernels(rt).hashFeatures(enc.ptr, work, 1, 1n, work + 16);
  return (rt.heap.u64[(work + 16) >>> 3]! << 64n) | lo;
}
