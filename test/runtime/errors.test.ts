// One kind of error per kind of misuse, across the API: a detached buffer or an object used after free() is a
// TypeError naming the argument or the object, never the engine's raw message or a silently empty input.
import { describe, expect, it } from 'vitest';
import { FingerprintSet, hammingDistances, simhashMany, withinDistance } from '../../src/index.js';

function detached<T extends ArrayBufferView>(view: T): T {
  structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
  return view;
}

const DETACHED = 'is a view of a detached ArrayBuffer (transferred or resized away)';

describe('detached buffers', () => {
  it('are a TypeError naming the argument wherever a typed array is taken', () => {
    expect(() => hammingDistances(0n, detached(new BigUint64Array([1n, 2n])))).toThrow(
      new TypeError(`fps ${DETACHED}`),
    );
    expect(() => withinDistance(0n, detached(new BigUint64Array(4)), 3)).toThrow(new TypeError(`fps ${DETACHED}`));
    expect(() => FingerprintSet.from(detached(new BigUint64Array(2)))).toThrow(new TypeError(`fps ${DETACHED}`));
    expect(() => simhashMany([detached(new Uint8Array(3))])).toThrow(new TypeError(`document 0 ${DETACHED}`));
  });

  it('an empty view of a live buffer is still an empty input', () => {
    expect(hammingDistances(0n, new BigUint64Array(0))).toEqual(new Uint8Array(0));
  });
});

describe('use after free()', () => {
  it('a FingerprintSet is a TypeError naming the set', () => {
    const set = FingerprintSet.from(new BigUint64Array([5n]));
    set.free();
    expect(() => set.size).toThrow(
      new TypeError('this FingerprintSet (64-bit, 1 fingerprints) was used after free(); create a new one'),
    );
    expect(() => hammingDistances(0n, set)).toThrow(TypeError);
  });
});
