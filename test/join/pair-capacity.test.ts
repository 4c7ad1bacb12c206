// The join's pair capacity (MAX_JOIN_PAIRS) must be one that fits WebAssembly's 4 GiB: the up-front count of
// identical pairs refuses a join past it at once, naming the count and the capacity, instead of a walk that fails
// to allocate after it has run. The bytes a pair costs are measured here on a small join, not taken from the source.
import { describe, expect, it } from 'vitest';
import { findNearDuplicates } from '../../src/index.js';
import { MAX_JOIN_PAIRS } from '../../src/join/join.js';
import { wasm } from '../../src/runtime/wasm.js';

const WASM_MEMORY = 2 ** 32;

describe('the join pair capacity', () => {
  // First in the file, so that no earlier join has grown the regions this one would reuse.
  it('at the peak cost per pair, the capacity fits in WebAssembly memory', () => {
    // 1449 copies of one fingerprint: 1,049,076 pairs, just past a doubling of the pair-key buffer (2^20), where
    // the buffer's spare room and the space its smaller predecessors left make a pair cost the most.
    const n = 1449;
    const pairs = (n * (n - 1)) / 2;
    expect(pairs).toBeGreaterThan(2 ** 20);
    const heap = wasm().heap;
    const before = heap.highWater;
    expect(findNearDuplicates(new BigUint64Array(n).fill(0x5555n), { k: 0 }).a.length).toBe(pairs);
    const perPair = (heap.highWater - before) / pairs;
    expect(perPair).toBeGreaterThan(25); // keys, sort copy, a, b and distance at the least
    expect(MAX_JOIN_PAIRS * perPair).toBeLessThan(WASM_MEMORY);
  });

  it('a join of identical fingerprints past the capacity fails at once, naming both counts; the library stays usable', () => {
    // 16,000 copies (127,992,000 pairs) passed a capacity of 2^27 and failed to allocate after a 15 s walk; and
    // the fewest copies whose pairs exceed the capacity.
    let fewest = 2;
    while ((fewest * (fewest - 1)) / 2 <= MAX_JOIN_PAIRS) fewest++;
    for (const n of [16_000, fewest]) {
      const pairs = (n * (n - 1)) / 2;
      const fps = new BigUint64Array(n).fill(5n);
      const start = performance.now();
      expect(() => findNearDuplicates(fps, { k: 0 })).toThrow(
        new RegExp(`at least ${pairs} pairs .*more than the ${MAX_JOIN_PAIRS} that fit in memory`),
      );
      expect(performance.now() - start).toBeLessThan(5000); // counted, not walked
    }
    expect(findNearDuplicates(new BigUint64Array([1n, 1n]), { k: 0 }).a.length).toBe(1);
  });
});
