// The dedup pipeline's second stage: SimHash pairs within a generous k are candidates, kept only when the two
// texts' word-shingle Jaccard reaches a threshold (measured in docs/quality.md: precision 1.000 and recall
// 0.93–0.98 at k = 12, 64 bits, threshold 0.6). The shingle sets are built in WebAssembly by the fingerprint
// kernel's own word tokenizer and XXH3 shingle hashes (assembly/verify-pairs.ts), only for documents in a
// candidate pair, a window of documents per call. Documents without words (shingle set empty) pair only with
// documents whose trimmed text is identical, so "©", "%s" and "???" do not all fall into one cluster.
import type { Pairs } from '../results.js';
import { checkTextItems, show } from '../errors.js';
import { type PrebuiltSets, VERIFY_WINDOW_BYTES, textOf } from './shingle-sets.js';
import { PairChecks, pairFlags, textSource } from './pair-checks.js';

/**
 * How candidate pairs are verified: by the exact Jaccard similarity of the texts' word-shingle sets. Bad values
 * throw TypeError or RangeError naming them.
 */
export interface VerifyOptions {
  /** Smallest shingle Jaccard similarity of a kept pair, 0 < threshold ≤ 1 (default 0.6). */
  threshold?: number;
  /** Words per shingle, 1 to 64 (default 3). */
  width?: number;
}

export const DEFAULT_THRESHOLD = 0.6;

export function checkVerifyOptions(v: unknown): Required<VerifyOptions> {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new TypeError(`verify must be false or an object, got ${show(v)}`);
  const { threshold = DEFAULT_THRESHOLD, width = 3, ...rest } = v as VerifyOptions;
  for (const key of Object.keys(rest)) throw new TypeError(`unknown verify option ${JSON.stringify(key)}`);
  if (typeof threshold !== 'number') throw new TypeError(`verify.threshold must be a number, got ${show(threshold)}`);
  if (!(threshold > 0 && threshold <= 1))
    throw new RangeError(`verify.threshold must be in (0, 1], got ${show(threshold)}`);
  if (typeof width !== 'number') throw new TypeError(`verify.width must be a number, got ${show(width)}`);
  if (!Number.isInteger(width) || width < 1 || width > 64)
    throw new RangeError(`verify.width must be an integer from 1 to 64, got ${show(width)}`);
  return { threshold, width };
}

/**
 * The candidate pairs whose texts' shingle Jaccard is ≥ threshold (or that are identical wordless texts), as
 * typed-array columns (Pairs, a subset of `candidates` in its order).
 */
export function verifyPairs(
  texts: readonly (string | Uint8Array)[],
  candidates: Pairs,
  verifyOptions: VerifyOptions = {},
): Pairs {
  const options = checkVerifyOptions(verifyOptions);
  checkPairs(texts, candidates);
  return keepFlagged(candidates, jaccardFlags(texts, candidates.a, candidates.b, options));
}

/**
 * For each pair (a[p], b[p]) of documents of `texts`, 1 when its shingle Jaccard is ≥ threshold (or both texts are
 * wordless and identical once trimmed) and `checks` keeps it, else 0: pairFlags on sets built from the texts, a
 * window of about `windowBytes` of text at a time.
 */
export function jaccardFlags(
  texts: readonly (string | Uint8Array)[],
  a: Uint32Array,
  b: Uint32Array,
  options: Required<VerifyOptions>,
  windowBytes = VERIFY_WINDOW_BYTES,
  checks: PairChecks = PairChecks.all(),
  prebuilt: PrebuiltSets | null = null,
): Uint8Array {
  return pairFlags(texts.length, textSource(texts, options.width), a, b, options, checks, windowBytes, prebuilt);
}

/**
 * Without verification: a pair with a featureless document (fingerprint 0 by the spec) is kept only when both
 * are featureless and their trimmed texts are identical. Returns typed-array columns (Pairs, a subset of
 * `candidates` in its order).
 */
export function dropFeaturelessPairs(
  texts: readonly (string | Uint8Array)[],
  candidates: Pairs,
  featureCounts: Float64Array,
): Pairs {
  checkPairs(texts, candidates);
  if (!(featureCounts instanceof Float64Array) || featureCounts.length !== texts.length) {
    throw new TypeError(
      `featureCounts must be a Float64Array with one count per text (${texts.length}), got ${show(featureCounts)}`,
    );
  }
  const keep = new Uint8Array(candidates.a.length);
  for (let p = 0; p < candidates.a.length; p++) {
    const i = candidates.a[p]!;
    const j = candidates.b[p]!;
    const ci = featureCounts[i]!;
    const cj = featureCounts[j]!;
    let ok = ci > 0 && cj > 0;
    if (ci === 0 && cj === 0) {
      const ti = texts[i]!;
      const tj = texts[j]!;
      ok = textOf(ti).trim() === textOf(tj).trim();
    }
    if (ok) keep[p] = 1;
  }
  return keepFlagged(candidates, keep);
}

function checkPairs(texts: readonly (string | Uint8Array)[], pairs: Pairs): void {
  if (!Array.isArray(texts)) throw new TypeError(`texts must be an array, got ${show(texts)}`);
  if (
    pairs === null ||
    typeof pairs !== 'object' ||
    !(pairs.a instanceof Uint32Array) ||
    !(pairs.b instanceof Uint32Array) ||
    !(pairs.distance instanceof Uint8Array) ||
    pairs.a.length !== pairs.b.length ||
    pairs.a.length !== pairs.distance.length
  ) {
    throw new TypeError(
      `pairs must be { a: Uint32Array, b: Uint32Array, distance: Uint8Array } of one length, got ${show(pairs)}`,
    );
  }
  for (let p = 0; p < pairs.a.length; p++) {
    if (pairs.a[p]! >= texts.length || pairs.b[p]! >= texts.length) {
      throw new RangeError(
        `pair ${p} (${pairs.a[p]}, ${pairs.b[p]}) names a document beyond the ${texts.length} texts`,
      );
    }
  }
  checkTextItems(texts);
}

/** The pairs whose flag is set, in order (the pairs themselves when every flag is). */
export function keepFlagged(pairs: Pairs, flags: Uint8Array): Pairs {
  let kept = 0;
  for (let p = 0; p < flags.length; p++) kept += flags[p]!;
  if (kept === pairs.a.length) return pairs;
  const a = new Uint32Array(kept);
  const b = new Uint32Array(kept);
  const distance = new Uint8Array(kept);
  let q = 0;
  for (let p = 0; p < flags.length; p++) {
    if (!flags[p]) continue;
    a[q] = pairs.a[p]!;
    b[q] = pairs.b[p]!;
    distance[q++] = pairs.distance[p]!;
  }
  return { a, b, distance };
}
