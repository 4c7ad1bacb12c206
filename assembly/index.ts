// The module's exports: thin re-exports of each concern. Built twice (scalar and SIMD) from the same source.
import { setupReducer } from "./reducer";
import { setupTokenizers } from "./fingerprint";

export { fingerprintTexts, fingerprintFeatures, fingerprintHashes, hashFeatures } from "./fingerprint";
export { javaTexts, javaFeatures } from "./presets/java";

/** First free byte after static data: src/memory.ts allocates from here. */
export function heapBase(): usize {
  return __heap_base;
}

export function setup(): void {
  setupReducer();
  setupTokenizers();
}
