// The default preset: this library's versioned spec (SPEC_ID, docs/spec.md). Texts are tokenized,
// hashed (assembly/feature-hash.ts) and reduced inside WebAssembly by assembly/fingerprint.ts. The same kernels
// with the first version's hashes are the preset 'simhash-wasm/1', so fingerprints stored under it keep working.
// Its feature-list rules and batch layout are reused by the java preset, which differs only in its kernels.
import { show } from '../../errors.js';
import type { Heap, Region } from '../../runtime/heap.js';
import {
  type EncodedTexts,
  align16,
  encodeStrings,
  encodeTexts,
  flattenFeatures,
  regions,
} from '../../runtime/marshal.js';
import type { Runtime } from '../../runtime/wasm.js';
import type { Plan } from '../options.js';
import { SPEC_V1, SPEC_V2 } from '../modes.shared.js';
import type { FeatureDoc, KernelOutput, PresetDefinition } from './preset.js';

interface DefaultKernels {
  fingerprintTexts(
    text: number,
    offsets: number,
    count: number,
    mode: number,
    width: number,
    bits: number,
    scratch: number,
    out: number,
    counts: number,
    spec: number,
  ): void;
  fingerprintFeatures(...args: [...Parameters<FeatureKernel>, spec: number]): void;
}

/** The signature of the feature kernels: the fields of a FeatureBatch, then the width and the outputs. */
export type FeatureKernel = (
  bytes: number,
  featOffsets: number,
  docOffsets: number,
  count: number,
  weights: number,
  bits: number,
  out: number,
  counts: number,
) => void;

export function checkWeight(weight: unknown, feature: string, doc: number): number {
  if (typeof weight !== 'number') {
    throw new TypeError(
      `document ${doc}: the weight of feature ${show(feature)} must be a number, got ${show(weight)}`,
    );
  }
  if (!Number.isFinite(weight)) {
    throw new RangeError(`document ${doc}: the weight of feature ${show(feature)} must be finite, got ${weight}`);
  }
  return weight;
}

/** Features from a list: strings weigh 1 each, [feature, weight] pairs their weight. */
export function collectFeatures(features: Iterable<unknown>, doc: number, normalize: Plan['normalize']): FeatureDoc {
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

/** Features from a feature → weight map. */
export function mapFeatures(map: ReadonlyMap<unknown, unknown>, doc: number, normalize: Plan['normalize']): FeatureDoc {
  const strings: string[] = [];
  const weights: number[] = [];
  for (const [s, w] of map) {
    if (typeof s !== 'string') throw new TypeError(`document ${doc}: map keys must be strings, got ${show(s)}`);
    weights.push(checkWeight(w, s, doc));
    strings.push(normalize ? s.normalize(normalize) : s);
  }
  return { index: doc, strings, weights };
}

/** A batch of texts laid out for a text kernel: its pointers, and the longest text in bytes (0 if unmeasured). */
export interface TextBatch extends KernelOutput {
  bytes: number;
  offsets: number;
  count: number;
  longest: number;
}

/** Puts the offsets of texts already encoded into the work region and reserves the kernel's outputs after them. */
export function layoutTexts(
  rt: Runtime,
  encoded: { ptr: number; offsets: Uint32Array; longest?: number },
  bits: number,
): TextBatch {
  const n = encoded.offsets.length - 1;
  const offsetsBytes = align16((n + 1) * 4);
  const outBytes = n * (bits === 128 ? 16 : 8);
  const work = regions(rt).work.reserve(offsetsBytes + outBytes + n * 8);
  rt.heap.u32.set(encoded.offsets, work >>> 2);
  const out = work + offsetsBytes;
  return { bytes: encoded.ptr, offsets: work, count: n, longest: encoded.longest ?? 0, out, counts: out + outBytes };
}

/** A batch of feature documents laid out for a feature kernel: the pointers it takes, in its argument order. */
export interface FeatureBatch {
  bytes: number;
  featOffsets: number;
  docOffsets: number;
  count: number;
  /** One f64 per feature, or 0 when every weight is 1. */
  weights: number;
  out: number;
  counts: number;
}

/** Writes a batch of feature documents into WebAssembly memory; `encode` writes the feature strings. */
export function layoutFeatures(
  rt: Runtime,
  docs: readonly FeatureDoc[],
  bits: number,
  encode: (heap: Heap, region: Region, strings: readonly string[]) => { ptr: number; offsets: Uint32Array },
): FeatureBatch {
  const { heap } = rt;
  const r = regions(rt);
  const n = docs.length;
  const { strings, docOffsets, weighted } = flattenFeatures(docs);
  const total = strings.length;
  const encoded = encode(heap, r.text, strings);
  const featBytes = align16((total + 1) * 4);
  const docBytes = align16((n + 1) * 4);
  const weightBytes = weighted ? total * 8 : 0;
  const outBytes = n * (bits === 128 ? 16 : 8);
  const work = r.work.reserve(featBytes + docBytes + weightBytes + outBytes + n * 8);
  const docPtr = work + featBytes;
  const weightPtr = weighted ? docPtr + docBytes : 0;
  const out = docPtr + docBytes + weightBytes;
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
  return {
    bytes: encoded.ptr,
    featOffsets: work,
    docOffsets: docPtr,
    count: n,
    weights: weightPtr,
    out,
    counts: out + outBytes,
  };
}

/** Fingerprints texts already in the text region as UTF-8 (encodeTexts, copyEncodedTexts). */
function runEncodedTexts(rt: Runtime, encoded: EncodedTexts, plan: Plan): KernelOutput {
  const b = layoutTexts(rt, encoded, plan.bits);
  // The word tokenizers fold case into scratch: up to twice the longest document's bytes.
  const scratch = plan.mode > 0 ? regions(rt).scratch.reserve(2 * b.longest + 64) : 0;
  kernels(rt).fingerprintTexts(
    b.bytes,
    b.offsets,
    b.count,
    plan.mode,
    plan.width,
    plan.bits,
    scratch,
    b.out,
    b.counts,
    plan.spec,
  );
  return b;
}

function kernels(rt: Runtime): DefaultKernels {
  return rt.kernels as unknown as DefaultKernels;
}

/** The default spec's kernels with hash version `spec` (the plan carries it to the kernels). */
function defaultFamily(spec: number): PresetDefinition {
  return {
    spec,
    defaultTokenizer: 'shingles',
    checkOptions() {},
    checkTokenizer() {},
    textsAsStrings: false,
    collectFeatures,
    mapFeatures,

    runTexts(rt: Runtime, texts: ReadonlyArray<string | Uint8Array>, plan: Plan): KernelOutput {
      return runEncodedTexts(rt, encodeTexts(rt.heap, regions(rt).text, texts), plan);
    },

    runEncodedTexts,

    runFeatures(rt: Runtime, docs: readonly FeatureDoc[], plan: Plan): KernelOutput {
      const b = layoutFeatures(rt, docs, plan.bits, encodeStrings);
      kernels(rt).fingerprintFeatures(
        b.bytes,
        b.featOffsets,
        b.docOffsets,
        b.count,
        b.weights,
        plan.bits,
        b.out,
        b.counts,
        plan.spec,
      );
      return { out: b.out, counts: b.counts };
    },
  };
}

/** 'default' and 'simhash-wasm/2': the current spec (SPEC_ID). */
export const defaultPreset = defaultFamily(SPEC_V2);
/** 'simhash-wasm/1': the first spec, XXH3-64 for every feature and shingle. */
export const specV1Preset = defaultFamily(SPEC_V1);
