// The fingerprint API: simhash, simhashMany, createSimHasher and friends. Inputs are classified and validated
// here, marshalled by marshal.ts, and fingerprinted by one WebAssembly call per batch and kind of input.
import { type Bits, type Feature, type Plan, type SimHashOptions, checkBits, resolveOptions, show } from './options.js';
import { align16, encodeStrings, encodeTexts, encodeUtf16, flattenFeatures, regions } from '../runtime/marshal.js';
import { jsFeatures } from './tokenize.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
// python-simhash preset (issue 8): its feature rules and kernels live in presets/python.ts.
import { type PythonFeatureDoc, collectPythonFeatures, mapPythonFeatures, runPythonFeatures, runPythonTexts } from './presets/python.js';

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

const decoder = new TextDecoder();

interface FeatureDoc {
  index: number;
  strings: string[];
  weights: number[] | null;
}

function checkWeight(weight: unknown, feature: string, doc: number): number {
  if (typeof weight !== 'number') {
    throw new TypeError(`document ${doc}: the weight of feature ${show(feature)} must be a number, got ${show(weight)}`);
  }
  if (!Number.isFinite(weight)) {
    throw new RangeError(`document ${doc}: the weight of feature ${show(feature)} must be finite, got ${weight}`);
  }
  return weight;
}

function collectFeatures(features: Iterable<unknown>, doc: number, normalize: Plan['normalize']): FeatureDoc {
  const strings: string[] = [];
  let weights: number[] | null = null;
  let i = 0;
  for (const f of features) {
    let s: string;
    let w = 1;
    if (typeof f === 'string') s = f;
    else if (Array.isArray(f) && f.length === 2 && typeof f[0] === 'string') {
      s = f[0];
      w = checkWeight(f[1], s, doc);
    } else {
      throw new TypeError(`document ${doc}: feature ${i} must be a string or a [string, number] pair, got ${show(f)}`);
    }
    if (w !== 1 && weights === null) weights = new Array<number>(strings.length).fill(1);
    if (weights !== null) weights.push(w);
    strings.push(normalize ? s.normalize(normalize) : s);
    i++;
  }
  return { index: doc, strings, weights };
}

function mapFeatures(map: ReadonlyMap<unknown, unknown>, doc: number, normalize: Plan['normalize']): FeatureDoc {
  const strings: string[] = [];
  const weights: number[] = [];
  for (const [s, w] of map) {
    if (typeof s !== 'string') throw new TypeError(`document ${doc}: map keys must be strings, got ${show(s)}`);
    weights.push(checkWeight(w, s, doc));
    strings.push(normalize ? s.normalize(normalize) : s);
  }
  return { index: doc, strings, weights };
}

class Hasher implements SimHasher {
  readonly options: Plan;
  private readonly words: number;

  constructor(plan: Plan) {
    this.options = plan;
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
    const n = inputs.length;
    const texts: Array<string | Uint8Array> = [];
    const textIndex: number[] = [];
    const featureDocs: FeatureDoc[] = [];
    const python = plan.preset === 'python-simhash';
    // Classify and validate everything before any of it reaches WebAssembly.
    for (let i = 0; i < n; i++) {
      const input = inputs[i];
      if (typeof input === 'string' || input instanceof Uint8Array) {
        let text: string | Uint8Array = input;
        const asString = plan.mode < 0 || plan.normalize !== false || plan.preset === 'java' || python;
        if (asString && typeof text !== 'string') text = decoder.decode(text);
        if (plan.normalize && typeof text === 'string') text = text.normalize(plan.normalize);
        if (plan.mode < 0) {
          const features = jsFeatures(text as string, plan);
          featureDocs.push(python ? collectPythonFeatures(features, i, false) : collectFeatures(features, i, false));
        } else {
          texts.push(text);
          textIndex.push(i);
        }
      } else if (Array.isArray(input)) {
        featureDocs.push(python ? collectPythonFeatures(input, i, plan.normalize) : collectFeatures(input, i, plan.normalize));
      } else if (input instanceof Map) {
        featureDocs.push(python ? mapPythonFeatures(input, i, plan.normalize) : mapFeatures(input, i, plan.normalize));
      } else {
        throw new TypeError(
          `${what}${n === 1 && what === 'input' ? '' : ' ' + i} must be a string, a Uint8Array, an array of features or a Map, got ${show(input)}`,
        );
      }
    }
    const fingerprints = new BigUint64Array(n * this.words);
    const featureCounts = new Float64Array(n);
    if (texts.length > 0) this.runTexts(rt, texts, textIndex, fingerprints, featureCounts);
    if (featureDocs.length > 0) this.runFeatures(rt, featureDocs, fingerprints, featureCounts);
    return { fingerprints, featureCounts };
  }

  private runTexts(rt: Runtime, texts: Array<string | Uint8Array>, index: number[], fps: BigUint64Array, counts: Float64Array): void {
    const { heap, kernels } = rt;
    const r = regions(rt);
    const plan = this.options;
    const n = texts.length;
    if (plan.preset === 'python-simhash') {
      const { out, counts: countsAt } = runPythonTexts(rt, texts as string[], plan.bits);
      return this.collect(rt, out, countsAt, index, n, fps, counts);
    }
    const java = plan.preset === 'java';
    const encoded: { ptr: number; offsets: Uint32Array; longest?: number } = java
      ? encodeUtf16(heap, r.text, texts as string[])
      : encodeTexts(heap, r.text, texts);
    const offsetsBytes = align16((n + 1) * 4);
    const outBytes = n * 8 * this.words;
    const work = r.work.reserve(offsetsBytes + outBytes + n * 8);
    const outPtr = work + offsetsBytes;
    const countsPtr = outPtr + outBytes;
    const scratch = !java && plan.mode > 0 ? r.scratch.reserve(2 * encoded.longest! + 64) : 0;
    heap.u32.set(encoded.offsets, work >>> 2);
    if (java) kernels.javaTexts(encoded.ptr, work, n, plan.bits, outPtr, countsPtr);
    else kernels.fingerprintTexts(encoded.ptr, work, n, plan.mode, plan.width, plan.bits, scratch, outPtr, countsPtr);
    this.collect(rt, outPtr, countsPtr, index, n, fps, counts);
  }

  private runFeatures(rt: Runtime, docs: FeatureDoc[], fps: BigUint64Array, counts: Float64Array): void {
    const { heap, kernels } = rt;
    const r = regions(rt);
    const plan = this.options;
    const n = docs.length;
    if (plan.preset === 'python-simhash') {
      // Every doc of this preset came from collectPythonFeatures / mapPythonFeatures.
      const { out, counts: countsAt } = runPythonFeatures(rt, docs as PythonFeatureDoc[], plan.bits);
      return this.collect(rt, out, countsAt, docs.map((d) => d.index), n, fps, counts);
    }
    const { strings, docOffsets, weighted } = flattenFeatures(docs);
    const total = strings.length;
    const java = plan.preset === 'java';
    const encoded = java ? encodeUtf16(heap, r.text, strings) : encodeStrings(heap, r.text, strings);
    const featBytes = align16((total + 1) * 4);
    const docBytes = align16((n + 1) * 4);
    const weightBytes = weighted ? total * 8 : 0;
    const outBytes = n * 8 * this.words;
    const work = r.work.reserve(featBytes + docBytes + weightBytes + outBytes + n * 8);
    const docPtr = work + featBytes;
    const weightPtr = weighted ? docPtr + docBytes : 0;
    const outPtr = docPtr + docBytes + weightBytes;
    const countsPtr = outPtr + outBytes;
    heap.u32.set(encoded.offsets, work >>> 2);
    heap.u32.set(docOffsets, docPtr >>> 2);
    if (weighted) {
      const f64 = heap.f64;
      for (let i = 0; i < n; i++) {
        const d = docs[i]!;
        const base = (weightPtr >>> 3) + docOffsets[i]!;
        if (d.weights) for (let j = 0; j < d.weights.length; j++) f64[base + j] = d.weights[j]!;
        else f64.fill(1, base, base + d.strings.length);
      }
    }
    if (java) kernels.javaFeatures(encoded.ptr, work, docPtr, n, weightPtr, plan.bits, outPtr, countsPtr);
    else kernels.fingerprintFeatures(encoded.ptr, work, docPtr, n, weightPtr, plan.bits, outPtr, countsPtr);
    this.collect(rt, outPtr, countsPtr, docs.map((d) => d.index), n, fps, counts);
  }

  private collect(rt: Runtime, outPtr: number, countsPtr: number, index: number[], n: number, fps: BigUint64Array, counts: Float64Array): void {
    const words = this.words;
    const u64 = rt.heap.u64;
    const f64 = rt.heap.f64;
    const o = outPtr >>> 3;
    const c = countsPtr >>> 3;
    if (n === fps.length / words && index[n - 1] === n - 1) {
      fps.set(u64.subarray(o, o + n * words));
      counts.set(f64.subarray(c, c + n));
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
  if (hashes.length % words !== 0) throw new RangeError(`128-bit hashes need two words each, got ${hashes.length} words`);
  const n = hashes.length / words;
  const weights = options.weights;
  if (weights !== undefined) {
    if (!(weights instanceof Float64Array)) throw new TypeError(`weights must be a Float64Array, got ${show(weights)}`);
    if (weights.length !== n) throw new RangeError(`weights must have one entry per hash (${n}), got ${weights.length}`);
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
  rt.kernels.fingerprintHashes(ptr, n, weights ? ptr + hashBytes : 0, bits, out);
  const u64 = rt.heap.u64;
  return words === 2 ? (u64[(out >>> 3) + 1]! << 64n) | u64[out >>> 3]! : u64[out >>> 3]!;
}

/** The default spec's hash of one feature: XXH64 of its UTF-8 bytes (seed 0; 128 bits: seed 1 gives the high word). */
export function featureHash(feature: string | Uint8Array, bits: Bits = 64): bigint {
  checkBits(bits);
  if (typeof feature !== 'string' && !(feature instanceof Uint8Array)) {
    throw new TypeError(`feature must be a string or a Uint8Array, got ${show(feature)}`);
  }
  const rt = wasm();
  const r = regions(rt);
  const enc = typeof feature === 'string' ? encodeStrings(rt.heap, r.text, [feature]) : encodeTexts(rt.heap, r.text, [feature]);
  const work = r.work.reserve(32);
  rt.heap.u32.set(enc.offsets, work >>> 2);
  rt.kernels.hashFeatures(enc.ptr, work, 1, 0n, work + 16);
  const lo = rt.heap.u64[(work + 16) >>> 3]!;
  if (bits === 32) return lo & 0xffffffffn;
  if (bits === 64) return lo;
  rt.kernels.hashFeatures(enc.ptr, work, 1, 1n, work + 16);
  return (rt.heap.u64[(work + 16) >>> 3]! << 64n) | lo;
}
