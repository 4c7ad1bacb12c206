// Runs the evaluation: ground truth once per corpus, then for each fingerprint configuration the precision/recall
// curve over k, SimHash plus verification, and the effect of short documents. Returns numbers; cli.ts prints them.
import { createSimHasher } from '../fingerprint/fingerprint.js';
import type { Bits, Normalization, Preset, TokenizerName } from '../fingerprint/options.js';
import { words, type Verifier, type VerifierOptions } from '../dedup/shingle-jaccard.js';
import { shingleSets, similarPairs, type SimilarPair } from './ground-truth.js';
import { pairsWithinFast, type HammingPairs } from './hamming-join.js';
import { bestPoint, curve, makeTruth, pairKey, smallestKWithRecall, type CurvePoint, type Truth } from './metrics.js';

export interface Corpus {
  name: string;
  ids: string[];
  texts: string[];
}

export interface EvalConfig {
  tokenizer: TokenizerName;
  /**
   * A preset other than the default ('simhash-wasm/1': shingles/3; 'java', 'python-simhash'): its own tokenizer and
   * hash; `tokenizer` is then only a label.
   */
  preset?: Preset;
  /** Shingle or n-gram width (tokenizers 'shingles' and 'ngrams'). */
  width?: number;
  bits: Bits;
  normalize?: Normalization | false;
  /**
   * 'tf': the library's built-in tokenizer, one unit per occurrence. The others pass word shingles from
   * src/dedup/shingle-jaccard.ts as weighted features: 'binary' each distinct shingle once, 'log' weight
   * 1 + ln(occurrences).
   */
  weighting?: 'tf' | 'binary' | 'log';
  /**
   * Prefixes every shingle with this number (JavaScript shingles, weighting as given): a different salt is a
   * different set of random hyperplanes, so repeating with salts shows how much a figure owes to the hash.
   */
  salt?: number;
}

export function configLabel(c: EvalConfig): string {
  if (c.preset && c.preset !== 'default') return `preset ${c.preset}`;
  const parts: string[] = [c.tokenizer + (c.width !== undefined ? `/${c.width}` : '')];
  if (c.normalize) parts.push(c.normalize);
  if (c.weighting && c.weighting !== 'tf') parts.push(c.weighting);
  if (c.salt !== undefined) parts.push(`salt ${c.salt}`);
  return parts.join(' ');
}

/** A document's word shingles as weighted features (the JavaScript path of the evaluation). */
function shingleFeatures(text: string, c: EvalConfig): Map<string, number> {
  const all = words(text);
  const width = c.width ?? 3;
  const prefix = c.salt !== undefined ? `${c.salt}\u0000` : '';
  const counts = new Map<string, number>();
  const add = (s: string): void => void counts.set(prefix + s, (counts.get(prefix + s) ?? 0) + 1);
  if (all.length > 0 && all.length < width) add(all.join(' '));
  for (let i = 0; i + width <= all.length; i++) add(all.slice(i, i + width).join(' '));
  for (const [s, n] of counts)
    counts.set(s, c.weighting === 'binary' ? 1 : c.weighting === 'log' ? 1 + Math.log(n) : n);
  return counts;
}

export interface GroundTruth {
  truth: Truth;
  pairs: SimilarPair[];
  /** Candidate pairs the join verified exactly, against n(n-1)/2 for comparing all pairs. */
  candidates: number;
  seconds: number;
}

/** Exact ground truth: word 3-shingle Jaccard of every pair >= 0.5 (precision) with the relevant ones >= 0.8. */
export function groundTruth(
  corpus: Corpus,
  options: { width?: number; precisionAt?: number; recallAt?: number } = {},
): GroundTruth {
  const start = performance.now();
  const sets = shingleSets(corpus.texts, options.width ?? 3);
  const stats = { candidates: 0 };
  const precisionAt = options.precisionAt ?? 0.5;
  const pairs = similarPairs(sets, precisionAt, stats);
  const truth = makeTruth(pairs, corpus.texts.length, precisionAt, options.recallAt ?? 0.8);
  return { truth, pairs, candidates: stats.candidates, seconds: (performance.now() - start) / 1000 };
}

export interface Fingerprinted {
  fingerprints: BigUint64Array;
  featureCounts: Float64Array;
  seconds: number;
}

export function fingerprint(texts: readonly string[], c: EvalConfig): Fingerprinted {
  const start = performance.now();
  const hasher = createSimHasher(
    c.preset && c.preset !== 'default'
      ? { preset: c.preset, bits: c.bits }
      : {
          tokenizer: c.tokenizer,
          bits: c.bits,
          normalize: c.normalize ?? false,
          ...(c.width !== undefined ? { width: c.width } : {}),
        },
  );
  const viaFeatures = (c.weighting !== undefined && c.weighting !== 'tf') || c.salt !== undefined;
  if (viaFeatures && c.tokenizer !== 'shingles')
    throw new RangeError(`weighting and salt apply to the 'shingles' tokenizer only`);
  const batch = viaFeatures
    ? hasher.hashManyDetailed(texts.map((t) => shingleFeatures(c.normalize ? t.normalize(c.normalize) : t, c)))
    : hasher.hashManyDetailed(texts);
  return { ...batch, seconds: (performance.now() - start) / 1000 };
}

export interface ConfigResult {
  config: EvalConfig;
  label: string;
  points: CurvePoint[];
  best: CurvePoint;
}

export function maxKFor(bits: Bits): number {
  return bits / 4;
}

export interface Evaluated extends ConfigResult {
  fingerprinted: Fingerprinted;
  pairs: HammingPairs;
}

export function evaluateConfig(corpus: Corpus, truth: Truth, config: EvalConfig): Evaluated {
  const fingerprinted = fingerprint(corpus.texts, config);
  const maxK = maxKFor(config.bits);
  const pairs = pairsWithinFast(fingerprinted.fingerprints, config.bits, maxK);
  const points = curve(pairs, truth, maxK);
  return { config, label: configLabel(config), points, best: bestPoint(points), fingerprinted, pairs };
}

/** The configurations compared by default: every tokenizer at 64 and 128 bits, plus variants of the default. */
export function defaultGrid(): EvalConfig[] {
  const grid: EvalConfig[] = [];
  for (const bits of [64, 128] as const) {
    grid.push({ tokenizer: 'whitespace', bits }, { tokenizer: 'words', bits }, { tokenizer: 'segmenter', bits });
    for (const width of [2, 3, 4, 5]) grid.push({ tokenizer: 'shingles', width, bits });
    for (const width of [2, 3, 4, 5, 6, 8]) grid.push({ tokenizer: 'ngrams', width, bits });
    grid.push(
      { tokenizer: 'shingles', width: 3, bits, weighting: 'binary' },
      { tokenizer: 'shingles', width: 3, bits, weighting: 'log' },
    );
    grid.push({ tokenizer: 'shingles', width: 3, bits, normalize: 'NFKC' });
  }
  grid.push({ tokenizer: 'shingles', width: 3, bits: 32 }, { tokenizer: 'ngrams', width: 4, bits: 32 });
  // The previous spec's hashes (shingles/3), and other libraries' behaviour, for comparison: the Java reference
  // (whitespace tokens) and python simhash's defaults.
  grid.push(
    { tokenizer: 'shingles', width: 3, preset: 'simhash-wasm/1', bits: 64 },
    { tokenizer: 'whitespace', preset: 'java', bits: 64 },
    { tokenizer: 'ngrams', preset: 'python-simhash', bits: 64 },
  );
  return grid;
}

export interface VerifiedResult {
  label: string;
  threshold: number;
  points: CurvePoint[];
  best: CurvePoint;
  /** The smallest k whose recall reaches 0.9 (undefined if none up to bits/4). */
  k90: CurvePoint | undefined;
  /** Candidate pairs SimHash hands to the verifier at k90 (or at bits/4). */
  verified: number;
}

export function verifierLabel(options: VerifierOptions): string {
  return options.method === 'sketch' ? `minhash ${options.sketchSize ?? 128}` : 'exact';
}

/** SimHash candidates within k, kept only when the verifier's shingle Jaccard is >= threshold. */
export function evaluateVerified(
  base: Evaluated,
  truth: Truth,
  verifier: Verifier,
  threshold: number,
  label = 'exact',
): VerifiedResult {
  const maxK = maxKFor(base.config.bits);
  const points = curve(base.pairs, truth, maxK, (a, b) => verifier.similarity(a, b) >= threshold);
  const k90 = smallestKWithRecall(points, 0.9);
  const verified = base.points[k90?.k ?? maxK]!.reported;
  return { label, threshold, points, best: bestPoint(points), k90, verified };
}

/** Documents with fewer than `minFeatures` features compare by exact text; the rest by SimHash. */
export function shortDocumentPolicy(
  corpus: Corpus,
  featureCounts: Float64Array,
  minFeatures: number,
): (a: number, b: number) => boolean {
  const key = corpus.texts.map((t, i) => (featureCounts[i]! < minFeatures ? exactKey(t) : ''));
  return (a, b) =>
    (featureCounts[a]! >= minFeatures && featureCounts[b]! >= minFeatures) || (key[a] !== '' && key[a] === key[b]);
}

/** The curve of `base` when documents with fewer than `minFeatures` features only pair with exact copies. */
export function curveWithPolicy(corpus: Corpus, truth: Truth, base: Evaluated, minFeatures: number): CurvePoint[] {
  const policy = shortDocumentPolicy(corpus, base.fingerprinted.featureCounts, minFeatures);
  return curve(base.pairs, truth, maxKFor(base.config.bits), policy);
}

/** What exact treatment compares: the words (case-folded), or for a text without words its trimmed self. */
export function exactKey(text: string): string {
  const w = words(text);
  return w.length > 0 ? 'w:' + w.join(' ') : 't:' + text.trim();
}

export interface ShortBucket {
  /** Smaller feature count of the pair: [min, max). */
  min: number;
  max: number;
  reported: number;
  precision: number;
}

/** Precision of the pairs reported at k, grouped by the smaller feature count of the two documents. */
export function shortDocumentBuckets(
  base: Evaluated,
  truth: Truth,
  k: number,
  edges = [0, 1, 2, 4, 8, 16, 32, Infinity],
): ShortBucket[] {
  const fc = base.fingerprinted.featureCounts;
  const buckets = edges.slice(0, -1).map((min, i) => ({ min, max: edges[i + 1]!, reported: 0, correct: 0 }));
  for (let i = 0; i < base.pairs.count; i++) {
    if (base.pairs.distance[i]! > k) continue;
    const a = base.pairs.a[i]!;
    const b = base.pairs.b[i]!;
    const m = Math.min(fc[a]!, fc[b]!);
    const bucket = buckets.find((x) => m >= x.min && m < x.max)!;
    bucket.reported++;
    const j = truth.jaccard.get(pairKey(a, b, truth.n));
    if (j !== undefined && j >= truth.precisionAt) bucket.correct++;
  }
  return buckets.map((x) => ({
    min: x.min,
    max: x.max,
    reported: x.reported,
    precision: x.reported === 0 ? 1 : x.correct / x.reported,
  }));
}
