// Precision and recall of SimHash's reported pairs against the exact ground truth, for every k at once.
//   precision(k) = reported pairs (distance <= k) whose Jaccard >= precisionAt (default 0.5) / reported pairs
//   recall(k)    = pairs with Jaccard >= recallAt (default 0.8) that are reported / all such pairs
// Nothing reported counts as precision 1; no relevant pair in the corpus counts as recall 1.
import type { SimilarPair } from './ground-truth.js';
import type { HammingPairs } from './hamming-join.js';

export interface Truth {
  /** Documents in the corpus. */
  readonly n: number;
  /** Exact Jaccard of every pair above the ground-truth threshold, keyed by a * n + b (a < b). */
  readonly jaccard: ReadonlyMap<number, number>;
  readonly precisionAt: number;
  readonly recallAt: number;
  /** Pairs with Jaccard >= recallAt. */
  readonly relevant: number;
}

export function pairKey(a: number, b: number, n: number): number {
  return a < b ? a * n + b : b * n + a;
}

export function makeTruth(pairs: readonly SimilarPair[], n: number, precisionAt = 0.5, recallAt = 0.8): Truth {
  if (!(recallAt >= precisionAt))
    throw new RangeError(`recallAt (${recallAt}) must be >= precisionAt (${precisionAt})`);
  const jaccard = new Map<number, number>();
  let relevant = 0;
  for (const p of pairs) {
    jaccard.set(pairKey(p.a, p.b, n), p.jaccard);
    if (p.jaccard >= recallAt) relevant++;
  }
  return { n, jaccard, precisionAt, recallAt, relevant };
}

export interface CurvePoint {
  k: number;
  /** Pairs reported at this k (after the filter, if any). */
  reported: number;
  precision: number;
  recall: number;
  f1: number;
}

export function f1(precision: number, recall: number): number {
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
}

/**
 * The precision/recall curve for k = 0..maxK. `keep(a, b)`, if given, is applied to every pair SimHash reports
 * (verification, or a policy for short documents): only kept pairs count as reported.
 */
export function curve(
  pairs: HammingPairs,
  truth: Truth,
  maxK: number,
  keep?: (a: number, b: number) => boolean,
): CurvePoint[] {
  const reported = new Float64Array(maxK + 1);
  const correct = new Float64Array(maxK + 1); // Jaccard >= precisionAt
  const found = new Float64Array(maxK + 1); // Jaccard >= recallAt
  for (let i = 0; i < pairs.count; i++) {
    const d = pairs.distance[i]!;
    if (d > maxK) continue;
    const a = pairs.a[i]!;
    const b = pairs.b[i]!;
    if (keep && !keep(a, b)) continue;
    reported[d]!++;
    const j = truth.jaccard.get(pairKey(a, b, truth.n));
    if (j !== undefined && j >= truth.precisionAt) correct[d]!++;
    if (j !== undefined && j >= truth.recallAt) found[d]!++;
  }
  const out: CurvePoint[] = [];
  let r = 0;
  let c = 0;
  let f = 0;
  for (let k = 0; k <= maxK; k++) {
    r += reported[k]!;
    c += correct[k]!;
    f += found[k]!;
    const precision = r === 0 ? 1 : c / r;
    const recall = truth.relevant === 0 ? 1 : f / truth.relevant;
    out.push({ k, reported: r, precision, recall, f1: f1(precision, recall) });
  }
  return out;
}

/** The point with the best F1; ties go to the smaller k (fewer candidates to check). */
export function bestPoint(points: readonly CurvePoint[]): CurvePoint {
  let best = points[0];
  if (!best) throw new RangeError('empty curve');
  for (const p of points) if (p.f1 > best.f1) best = p;
  return best;
}

/** The smallest k reaching `minRecall`, or undefined. */
export function smallestKWithRecall(points: readonly CurvePoint[], minRecall: number): CurvePoint | undefined {
  return points.find((p) => p.recall >= minRecall);
}
