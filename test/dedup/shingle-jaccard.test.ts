// The public shingle-Jaccard helpers refuse what they would otherwise answer for silently: a string or a number
// array is not a list of shingle hashes (minhashSketch gave every such input one constant sketch, so any two texts
// matched at 1.0, and jaccardSorted compared characters), and createVerifier refuses misspelt options. Expected
// similarities are worked out by hand from the sets.
import { describe, expect, it } from 'vitest';
import { createVerifier, jaccardSorted, minhashSketch, shingleHashes, sketchJaccard } from '../../src/index.js';

function detached<T extends ArrayBufferView>(view: T): T {
  structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
  return view;
}

describe('minhashSketch and sketchJaccard', () => {
  it('take a BigUint64Array of hashes and Uint32Array sketches, else a TypeError naming the argument', () => {
    expect(() => minhashSketch('a b c' as never)).toThrow(/^hashes must be a BigUint64Array, got "a b c"$/);
    expect(() => minhashSketch([1, 2, 3] as never)).toThrow(
      /hashes must be a BigUint64Array, got an array of length 3/,
    );
    expect(() => minhashSketch(new Uint32Array([1, 2, 3]) as never)).toThrow(TypeError);
    expect(() => minhashSketch(null as never)).toThrow(/hashes must be a BigUint64Array, got null/);
    expect(() => minhashSketch(detached(new BigUint64Array(2)))).toThrow(/hashes is a view of a detached/);
    expect(() => minhashSketch(new BigUint64Array(1), '8' as never)).toThrow(/size must be a number, got "8"/);
    expect(() => minhashSketch(new BigUint64Array(1), 0)).toThrow(RangeError);
    const sketch = minhashSketch(new BigUint64Array([1n]), 4);
    expect(() => sketchJaccard('abcd' as never, sketch)).toThrow(/a must be a Uint32Array/);
    expect(() => sketchJaccard(sketch, [1, 2, 3, 4] as never)).toThrow(/b must be a Uint32Array/);
    // Texts without a shingle in common estimate 0, as their exact similarity is (given as strings, both got one
    // constant sketch: 1).
    const a = shingleHashes('completely different words here');
    const b = shingleHashes('nothing in common at all');
    expect(jaccardSorted(a, b)).toBe(0);
    expect(sketchJaccard(minhashSketch(a), minhashSketch(b))).toBeLessThan(0.05);
  });
});

describe('jaccardSorted', () => {
  it('takes arrays or typed arrays of sorted distinct numbers or bigints, one kind, else names what is wrong', () => {
    expect(jaccardSorted([1, 2, 3], [2, 3, 4])).toBe(2 / 4);
    expect(jaccardSorted(new BigUint64Array([1n, 5n]), [5n])).toBe(1 / 2);
    expect(jaccardSorted(Uint32Array.of(7), [])).toBe(0);
    expect(() => jaccardSorted('abc' as never, 'abd' as never)).toThrow(
      /^a must be an array or typed array of sorted distinct numbers or bigints, got "abc"$/,
    );
    expect(() => jaccardSorted(null as never, null as never)).toThrow(/a must be .*got null/);
    expect(() => jaccardSorted([1], 'b' as never)).toThrow(/^b must be/);
    expect(() => jaccardSorted(['x', 'y'] as never, [1])).toThrow(/a\[0\] must be a number or a bigint, got "x"/);
    expect(() => jaccardSorted([1, 2n] as never, [1])).toThrow(/a\[1\] must be a number, as a\[0\] is, got 2n/);
    expect(() => jaccardSorted([1n], [1] as never)).toThrow(/a holds bigints and b holds numbers/);
    expect(() => jaccardSorted([1, 3], [4, 2])).toThrow(RangeError);
    expect(() => jaccardSorted([1, 3], [4, 2])).toThrow(/b\[1\] 2 is not above b\[0\] 4/);
    expect(() => jaccardSorted([1, 1], [1])).toThrow(/a\[1\] 1 is not above a\[0\] 1/);
    expect(() => jaccardSorted(detached(new Uint32Array(2)), [1])).toThrow(/a is a view of a detached/);
  });
});

describe('createVerifier options', () => {
  const texts = ['a b c d e', 'a b c d f'];
  it('refuses unknown names, and a sketchSize that method exact would ignore', () => {
    expect(() => createVerifier(texts, { metod: 'sketch' } as never)).toThrow(/^unknown option "metod"$/);
    expect(() => createVerifier(texts, { method: 'sketch', sketchsize: 4 } as never)).toThrow(TypeError);
    expect(() => createVerifier(texts, { widht: 2 } as never)).toThrow(/unknown option "widht"/);
    expect(() => createVerifier(texts, null as never)).toThrow(TypeError);
    expect(() => createVerifier(texts, { sketchSize: 64 })).toThrow(RangeError);
    expect(() => createVerifier(texts, { method: 'exact', sketchSize: 64 })).toThrow(/sketchSize 64 .*'exact'/);
    expect(() => createVerifier(texts, { method: 'sketch', sketchSize: '64' as never })).toThrow(TypeError);
    expect(() => createVerifier(texts, { method: 'sketch', sketchSize: 0 })).toThrow(RangeError);
    expect(() => createVerifier(texts, { method: 1 as never })).toThrow(TypeError);
    // 3-word shingles: {abc, bcd, cde} and {abc, bcd, cdf} share 2 of 4.
    expect(createVerifier(texts).similarity(0, 1)).toBe(0.5);
    expect(createVerifier(texts, { width: 2 }).similarity(0, 1)).toBe(3 / 5);
    const sketch = createVerifier(texts, { method: 'sketch', sketchSize: 256 });
    expect(sketch.similarity(0, 1)).toBeGreaterThan(0.3);
    expect(sketch.similarity(0, 1)).toBeLessThan(0.7);
  });
});
