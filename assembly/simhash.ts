// The module's exports: thin re-exports of each concern. Built twice (scalar and SIMD) from the same source.
import { setupReducer } from './reducer';
export { setDrainInterval } from './reducer';
import { setupTokenizers } from './tokenize';

export { fingerprintTexts, fingerprintFeatures, beginHashes, addHashes, endHashes, hashFeatures } from './fingerprint';
export { javaTexts, javaFeatures } from './presets/java';
export { pythonTexts, pythonFeatures, md5Digests } from './presets/python';
export { joinHistogram64, joinHistogram128, joinScatter64, joinScatter128, radixHistogram, radixSort, joinWalk64, joinWalk128, joinUnpack } from './join';
export { indexBuildTable, indexQuery, indexSortPairs, indexFirstRepeat, indexFirstCommon, indexMerge } from './fingerprint-index';
export { xxh64Begin, xxh64Stripes, xxh64End } from './xxh64';
export { buildShingleSets, testShingleSets, selectWindow, histogramBytes, documentWords } from './verify-pairs';
export { acrossPairs } from './document-pairs';
export { contentHashes, firstOfEqual } from './exact-copies';
export { jsonFields } from './json-field';
export { bandPairKeys } from './size-band';
export { probeIndex, probeQuery } from './probe-join';
export { joinProbe64 } from './join-probe';
export { hammingDistances64, hammingDistances128, hammingCount64, hammingCount128, hammingCollect64, hammingCollect128, hammingHistogram64, hammingHistogram128, hammingJoin, hammingJoinStepPairs, hammingJoinTile, hammingScanBlock, hammingEightStreamsMin, hammingSetBlocked } from './hamming';

// Layouts shared with the TypeScript side, exported as globals so a test can check the compiled module's copy
// against the TypeScript one (test/runtime/layout.test.ts).
export * from '../src/fingerprint/modes.shared';
export * from '../src/fingerprint-index/layout.shared';
export * from '../src/join/join-layout.shared';

/** First free byte after static data: src/runtime/heap.ts allocates from here. */
export function heapBase(): usize {
  return __heap_base;
}

export function setup(): void {
  setupReducer();
  setupTokenizers();
}
