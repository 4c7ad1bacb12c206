// The python-simhash preset (bit-exact with the Python package `simhash`, 1e0ng, 2.x): its tokenizer, its rules
// for weighted features, and the calls into assembly/presets/python.ts.
//
// Text: lowercase (str.lower() and String#toLowerCase agree, final sigma included), keep the runs of the regex
// [\w\u4e00-\u9fcc]+ and join them. Python 3's \w is str.isalnum() or '_', i.e. general categories L* and N*
// (combining marks are not \w) plus '_'; U+4E00..U+9FCC is inside \p{L}. The windows of 4 code points are cut in
// WebAssembly from this content, so a document crosses the boundary as one UTF-8 string.
//
// Features, replaying Simhash.build_by_features: the weight `w` starts at 1 and a [feature, weight] pair sets it,
// so a bare string after a pair reuses that pair's weight (the package never resets it); a bare string whose
// carried weight is not an integer makes Python raise (bytes * float), and so do we. Integer weights up to 50
// and all bare strings are summed in batches (a weight of 0 or less adds no bits but still counts in the
// total); other weights are added at once. A Map is a dict: every entry is a pair.
import { show } from '../../errors.js';
import { align16, encodeStrings, encodeTexts, flattenFeatures, regions } from '../../runtime/marshal.js';
import type { Runtime } from '../../runtime/wasm.js';
import type { Plan, SimHashOptions } from '../options.js';
import { checkWeight, layoutTexts } from './default.js';
import type { FeatureDoc, KernelOutput, PresetDefinition } from './preset.js';

interface PythonKernels {
  pythonTexts(text: number, offsets: number, count: number, bits: number, out: number, counts: number): void;
  pythonFeatures(
    bytes: number,
    featOffsets: number,
    docOffsets: number,
    count: number,
    weights: number,
    batched: number,
    bits: number,
    out: number,
    counts: number,
  ): void;
  md5Digests(bytes: number, featOffsets: number, n: number, out: number): void;
}

/** Python's large_weight_cutoff: integer weights above it skip the batch. */
const LARGE_WEIGHT_CUTOFF = 50;

// Python 3's \w: general categories L* and N* (U+4E00..U+9FCC is inside \p{L}) and '_'; never a lone surrogate.
// ASCII-only text takes a non-Unicode regex. Other text is scanned per UTF-16 unit against a table of the BMP
// built once from the same property escapes (~3x faster in V8 than a /u regex over the text); astral characters
// are tested with the regex itself.
const NOT_ASCII_WORD = /[^a-z0-9_]+/g;
const NON_ASCII = /[\u0080-\uffff]/;
const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
const LONE_SURROGATE = /\p{Cs}/u;
let bmpWord: Uint8Array | undefined;

function bmpWordTable(): Uint8Array {
  if (bmpWord === undefined) {
    bmpWord = new Uint8Array(65536);
    for (let c = 0; c < 65536; c++) {
      if ((c < 0xd800 || c > 0xdfff) && WORD_CHAR.test(String.fromCharCode(c))) bmpWord[c] = 1;
    }
  }
  return bmpWord;
}

/** The text the package slides its windows over: lowercased, only \w runs kept, joined without separators. */
export function pythonContent(text: string): string {
  const lower = text.toLowerCase();
  if (!NON_ASCII.test(lower)) return lower.replace(NOT_ASCII_WORD, '');
  const table = bmpWordTable();
  let out = '';
  let run = -1; // start of the current run of word characters
  for (let i = 0; i < lower.length; ) {
    const c = lower.charCodeAt(i);
    let width = 1;
    let word: boolean;
    if ((c & 0xfc00) === 0xd800 && (lower.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      width = 2;
      word = WORD_CHAR.test(lower.slice(i, i + 2));
    } else {
      word = table[c] === 1; // 0 for lone surrogates
    }
    if (word) {
      if (run < 0) run = i;
    } else if (run >= 0) {
      out += lower.slice(run, i);
      run = -1;
    }
    i += width;
  }
  if (run >= 0) out += run === 0 ? lower : lower.slice(run);
  return out;
}

/** The package's features of a text, in order: windows of 4 code points (fewer: the whole content, maybe ""). */
export function pythonTextFeatures(text: string): string[] {
  const points = Array.from(pythonContent(text));
  if (points.length < 4) return [points.join('')];
  const out = new Array<string>(points.length - 3);
  for (let i = 0; i + 4 <= points.length; i++) out[i] = points[i]! + points[i + 1]! + points[i + 2]! + points[i + 3]!;
  return out;
}

/** A document's features with the package's effective weights; `batched` is null when every weight is 1. */
export interface PythonFeatureDoc extends FeatureDoc {
  batched: Uint8Array | null;
}

function checkString(s: string, doc: number): string {
  if (LONE_SURROGATE.test(s)) {
    throw new RangeError(
      `document ${doc}: feature ${show(s)} has a lone surrogate, which has no UTF-8 form (Python raises UnicodeEncodeError)`,
    );
  }
  return s;
}

function finish(
  index: number,
  strings: string[],
  weights: number[],
  batched: number[],
  unit: boolean,
): PythonFeatureDoc {
  return unit
    ? { index, strings, weights: null, batched: null }
    : { index, strings, weights, batched: Uint8Array.from(batched) };
}

/** Features from a list (or a tokenizer function's iterable), validated before anything reaches WebAssembly. */
export function collectPythonFeatures(
  features: Iterable<unknown>,
  doc: number,
  normalize: Plan['normalize'],
): PythonFeatureDoc {
  const strings: string[] = [];
  const weights: number[] = [];
  const batched: number[] = [];
  let unit = true;
  let w = 1; // carried from the last pair, as in the package
  let i = 0;
  for (const f of features) {
    let s: string;
    let inBatch: boolean;
    if (typeof f === 'string') {
      s = f;
      if (!Number.isInteger(w)) {
        throw new TypeError(
          `document ${doc}: feature ${i} (${show(s)}) is a bare string after a pair of non-integer weight ${w}; ` +
            `python-simhash gives it that weight and Python raises TypeError`,
        );
      }
      inBatch = true;
    } else if (Array.isArray(f) && f.length === 2 && typeof f[0] === 'string') {
      s = f[0];
      w = checkWeight(f[1], s, doc);
      inBatch = Number.isInteger(w) && w <= LARGE_WEIGHT_CUTOFF;
    } else {
      throw new TypeError(`document ${doc}: feature ${i} must be a string or a [string, number] pair, got ${show(f)}`);
    }
    if (normalize) s = s.normalize(normalize);
    strings.push(checkString(s, doc));
    weights.push(w);
    batched.push(inBatch ? 1 : 0);
    if (w !== 1) unit = false;
    i++;
  }
  return finish(doc, strings, weights, batched, unit);
}

/** Features from a feature → weight map (a Python dict: every entry is a pair). */
export function mapPythonFeatures(
  map: ReadonlyMap<unknown, unknown>,
  doc: number,
  normalize: Plan['normalize'],
): PythonFeatureDoc {
  const strings: string[] = [];
  const weights: number[] = [];
  const batched: number[] = [];
  let unit = true;
  for (const [key, value] of map) {
    if (typeof key !== 'string') throw new TypeError(`document ${doc}: map keys must be strings, got ${show(key)}`);
    const w = checkWeight(value, key, doc);
    strings.push(checkString(normalize ? key.normalize(normalize) : key, doc));
    weights.push(w);
    batched.push(Number.isInteger(w) && w <= LARGE_WEIGHT_CUTOFF ? 1 : 0);
    if (w !== 1) unit = false;
  }
  return finish(doc, strings, weights, batched, unit);
}

function kernels(rt: Runtime): PythonKernels {
  return rt.kernels as unknown as PythonKernels;
}

/** Fingerprints of texts (already normalized if asked): one WebAssembly call for the batch. */
export function runPythonTexts(rt: Runtime, texts: readonly string[], bits: number): KernelOutput {
  const b = layoutTexts(rt, encodeTexts(rt.heap, regions(rt).text, texts.map(pythonContent)), bits);
  kernels(rt).pythonTexts(b.bytes, b.offsets, b.count, bits, b.out, b.counts);
  return b;
}

/** Fingerprints of feature documents from collectPythonFeatures / mapPythonFeatures: one call for the batch. */
export function runPythonFeatures(rt: Runtime, docs: readonly PythonFeatureDoc[], bits: number): KernelOutput {
  const { heap } = rt;
  const r = regions(rt);
  const n = docs.length;
  const { strings, docOffsets, weighted } = flattenFeatures(docs);
  const total = strings.length;
  const encoded = encodeStrings(heap, r.text, strings);
  const featBytes = align16((total + 1) * 4);
  const docBytes = align16((n + 1) * 4);
  const weightBytes = weighted ? align16(total * 8) : 0;
  const batchedBytes = weighted ? align16(total) : 0;
  const outBytes = n * (bits === 128 ? 16 : 8);
  const work = r.work.reserve(featBytes + docBytes + weightBytes + batchedBytes + outBytes + n * 8);
  const docPtr = work + featBytes;
  const weightPtr = weighted ? docPtr + docBytes : 0;
  const batchedPtr = weighted ? weightPtr + weightBytes : 0;
  const out = docPtr + docBytes + weightBytes + batchedBytes;
  const counts = out + outBytes;
  heap.u32.set(encoded.offsets, work >>> 2);
  heap.u32.set(docOffsets, docPtr >>> 2);
  if (weighted) {
    const f64 = heap.f64;
    const u8 = heap.u8;
    for (let i = 0; i < n; i++) {
      const d = docs[i]!;
      const f = docOffsets[i]!;
      const m = d.strings.length;
      if (d.weights && d.batched) {
        f64.set(d.weights, (weightPtr >>> 3) + f);
        u8.set(d.batched, batchedPtr + f);
      } else {
        f64.fill(1, (weightPtr >>> 3) + f, (weightPtr >>> 3) + f + m);
        u8.fill(1, batchedPtr + f, batchedPtr + f + m);
      }
    }
  }
  kernels(rt).pythonFeatures(encoded.ptr, work, docPtr, n, weightPtr, batchedPtr, bits, out, counts);
  return { out, counts };
}

export const pythonPreset: PresetDefinition<PythonFeatureDoc> = {
  spec: 0,
  // The package's tokenizer is fixed (lowercase, \w runs joined, windows of 4 code points); only a tokenizer
  // function may replace it. Plans record it as 'ngrams' of width 4.
  defaultTokenizer: 'ngrams',
  checkOptions(options: SimHashOptions) {
    if (options.tokenizer !== undefined && typeof options.tokenizer !== 'function') {
      throw new RangeError(
        `preset 'python-simhash' has its own tokenizer; only a tokenizer function may replace it, got ${show(options.tokenizer)}`,
      );
    }
    if (options.width !== undefined) {
      throw new TypeError(
        `preset 'python-simhash' slides windows of 4 code points; width is not an option of it, got ${show(options.width)}`,
      );
    }
  },
  checkTokenizer() {},
  textsAsStrings: true,
  collectFeatures: collectPythonFeatures,
  mapFeatures: mapPythonFeatures,
  runTexts: (rt, texts, plan) => runPythonTexts(rt, texts as readonly string[], plan.bits),
  runFeatures: (rt, docs, plan) => runPythonFeatures(rt, docs, plan.bits),
};

/** MD5 digests computed in WebAssembly (for the cross-check against node:crypto). */
export function md5Wasm(rt: Runtime, inputs: readonly Uint8Array[]): Uint8Array[] {
  const r = regions(rt);
  const n = inputs.length;
  const encoded = encodeTexts(rt.heap, r.text, inputs);
  const offsetsBytes = align16((n + 1) * 4);
  const work = r.work.reserve(offsetsBytes + n * 16);
  rt.heap.u32.set(encoded.offsets, work >>> 2);
  kernels(rt).md5Digests(encoded.ptr, work, n, work + offsetsBytes);
  const u8 = rt.heap.u8;
  return inputs.map((_, j) => u8.slice(work + offsetsBytes + j * 16, work + offsetsBytes + j * 16 + 16));
}
