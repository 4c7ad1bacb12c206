// The page's heavy work, off the main thread: fingerprints in batches (posting progress after each), the pairs
// within distance k, their clusters, and the histogram of pairwise distances.
//
// Messages in:  { type: 'run', id, texts: string[], options: { k, bits, tokenizer, width }, build }
// Messages out: { type: 'ready', id, build } once the WebAssembly module is loaded,
//               { type: 'progress', id, phase, done, total },
//               { type: 'result', id, ... } (typed arrays transferred, not copied), or { type: 'error', id, message }.
import {
  init,
  loadedBuild,
  simhashMany,
  findNearDuplicates,
  clusters,
  FingerprintSet,
  distanceHistogram,
} from './lib/simhash-wasm.mjs';

/** Documents per simhashMany call is bounded by text size too, so one progress step is a few milliseconds. */
const BATCH_DOCS = 2000;
const BATCH_CHARS = 512 * 1024;
/** Every pair is counted up to this many documents (n² distances, ~0.1 s at 20,000); above, rows are sampled. */
const EXACT_ROW_LIMIT = 20_000;
const SAMPLED_ROWS = 4_000;

/** @type {Promise<void> | undefined} */
let loading;

self.onmessage = async (event) => {
  const message = event.data;
  if (message?.type !== 'run') return;
  try {
    loading ??= init({ build: message.build ?? 'auto' });
    await loading;
    self.postMessage({ type: 'ready', id: message.id, build: loadedBuild() });
    run(message);
  } catch (error) {
    self.postMessage({
      type: 'error',
      id: message.id,
      message: error instanceof Error ? error.message : String(error),
    });
  }
};

function progress(id, phase, done, total) {
  self.postMessage({ type: 'progress', id, phase, done, total });
}

/** @param {{ id: number, texts: string[], options: { k: number, bits: 32 | 64 | 128, tokenizer: string, width?: number } }} message */
function run({ id, texts, options }) {
  const { k, bits, tokenizer, width } = options;
  const hashOptions = width === undefined ? { bits, tokenizer } : { bits, tokenizer, width };
  const words = bits === 128 ? 2 : 1;
  const n = texts.length;
  const timings = {};
  let started = performance.now();

  const fingerprints = new BigUint64Array(n * words);
  for (let start = 0; start < n; ) {
    let end = start;
    let chars = 0;
    while (end < n && (end === start || (end - start < BATCH_DOCS && chars < BATCH_CHARS)))
      chars += texts[end++].length;
    fingerprints.set(simhashMany(texts.slice(start, end), hashOptions), start * words);
    start = end;
    progress(id, 'fingerprints', start, n);
  }
  timings.fingerprintMs = performance.now() - started;

  started = performance.now();
  progress(id, 'pairs', 0, 1);
  // The join takes 64- or 128-bit words; 32-bit fingerprints are 64-bit words with a zero high half.
  const pairs = findNearDuplicates(fingerprints, { k, bits: bits === 128 ? 128 : 64 });
  progress(id, 'pairs', 1, 1);
  timings.pairsMs = performance.now() - started;

  started = performance.now();
  const { clusterOf, count: clusterCount } = clusters(n, pairs, { mode: 'connected' });
  timings.clusterMs = performance.now() - started;

  started = performance.now();
  const histogram = pairwiseHistogram(id, fingerprints, n, bits);
  timings.histogramMs = performance.now() - started;

  self.postMessage(
    {
      type: 'result',
      id,
      build: loadedBuild(),
      bits,
      k,
      fingerprints,
      clusterOf,
      clusterCount,
      pairs: { a: pairs.a, b: pairs.b, distance: pairs.distance },
      histogram: histogram.counts,
      histogramPairs: histogram.pairs,
      histogramSampled: histogram.sampled,
      timings,
    },
    [
      fingerprints.buffer,
      clusterOf.buffer,
      pairs.a.buffer,
      pairs.b.buffer,
      pairs.distance.buffer,
      histogram.counts.buffer,
    ],
  );
}

/**
 * Counts how many pairs of documents lie at each distance 0..bits with the library's distanceHistogram (one
 * WebAssembly scan per document over a FingerprintSet held in WASM memory). Row i's scan covers every document,
 * so each pair is seen from both ends and each document once against itself at distance 0: the exact pairwise
 * histogram is (Σ rows − n at distance 0) / 2. Above EXACT_ROW_LIMIT documents, SAMPLED_ROWS random rows are
 * scanned instead and their (ordered) pairs counted: an estimate of the shape, labelled as sampled on the page.
 */
function pairwiseHistogram(id, fingerprints, n, bits) {
  const width = bits === 128 ? 128 : 64; // 32-bit fingerprints sit in the low half of 64-bit words
  const words = width / 64;
  const counts = new Float64Array(bits + 1);
  const exact = n <= EXACT_ROW_LIMIT;
  const rows = exact ? n : SAMPLED_ROWS;
  const set = FingerprintSet.from(fingerprints, { bits: width });
  const next = exact ? null : seededRandom(0x9e3779b9);
  try {
    for (let r = 0; r < rows; r++) {
      const i = exact ? r : Math.floor(next() * n);
      const query = words === 2 ? (fingerprints[2 * i + 1] << 64n) | fingerprints[2 * i] : fingerprints[i];
      const row = distanceHistogram(query, set, { bits: width });
      for (let d = 0; d <= bits; d++) counts[d] += row[d];
      counts[0] -= 1; // the document against itself
      if (r % 256 === 255) progress(id, 'histogram', r + 1, rows);
    }
  } finally {
    set.free();
  }
  progress(id, 'histogram', rows, rows);
  if (exact) {
    for (let d = 0; d <= bits; d++) counts[d] /= 2;
    return { counts, pairs: (n * (n - 1)) / 2, sampled: false };
  }
  return { counts, pairs: rows * (n - 1), sampled: true };
}

/** xorshift32: the sampled rows are the same on every run. */
function seededRandom(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}
