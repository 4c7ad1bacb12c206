// rows(): the column results (Pairs, Neighbors) read as objects, row by row, against rows built by hand; its
// checks of the columns; and the types it gives each result.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  FingerprintIndex,
  type Neighbors,
  type Pairs,
  findNearDuplicates,
  nearest,
  pairsWithinDistance,
  rows,
  selfPairsWithinDistance,
} from '../src/index.js';

describe('rows', () => {
  it('yields one object per position, with every column, in order', () => {
    const pairs: Pairs = {
      a: new Uint32Array([0, 0, 4]),
      b: new Uint32Array([1, 7, 9]),
      distance: new Uint8Array([3, 0, 255]),
    };
    expect([...rows(pairs)]).toEqual([
      { a: 0, b: 1, distance: 3 },
      { a: 0, b: 7, distance: 0 },
      { a: 4, b: 9, distance: 255 },
    ]);
    const neighbors: Neighbors<string[]> = { id: ['x', 'y'], distance: new Uint8Array([1, 2]) };
    expect([...rows(neighbors)]).toEqual([
      { id: 'x', distance: 1 },
      { id: 'y', distance: 2 },
    ]);
    // Any object of columns: a plain array, a Float64Array, a BigUint64Array.
    expect([...rows({ p: [true, false], q: new Float64Array([0.5, 1]), r: new BigUint64Array([1n, 2n]) })]).toEqual([
      { p: true, q: 0.5, r: 1n },
      { p: false, q: 1, r: 2n },
    ]);
  });

  it('yields nothing for empty columns, and each call iterates afresh', () => {
    const empty: Pairs = { a: new Uint32Array(0), b: new Uint32Array(0), distance: new Uint8Array(0) };
    expect([...rows(empty)]).toEqual([]);
    const one = { id: new Uint32Array([5]), distance: new Uint8Array([2]) };
    const it1 = rows(one);
    expect(it1.next()).toEqual({ done: false, value: { id: 5, distance: 2 } });
    expect(it1.next().done).toBe(true);
    expect([...rows(one)]).toEqual([{ id: 5, distance: 2 }]);
  });

  it('reads the results of the library as they come', () => {
    const fps = new BigUint64Array([0b1111n, 0b1110n, 0b0000n, 0b1111n]);
    const pairs = selfPairsWithinDistance(fps, 1);
    // Hand-checked: 0~1 (1 bit), 0~3 (0), 1~3 (1); 2 is 3 or 4 bits from the others.
    expect([...rows(pairs)]).toEqual([
      { a: 0, b: 1, distance: 1 },
      { a: 0, b: 3, distance: 0 },
      { a: 1, b: 3, distance: 1 },
    ]);
    expect([...rows(findNearDuplicates(fps, { k: 1 }))]).toEqual([...rows(pairs)]);
    expect([...rows(pairsWithinDistance(new BigUint64Array([0b0001n]), fps, 1))]).toEqual([
      { a: 0, b: 2, distance: 1 },
    ]);
    expect([...rows(nearest(0b1111n, fps, 2))]).toEqual([
      { id: 0, distance: 0 },
      { id: 3, distance: 0 },
    ]);
    const index = new FingerprintIndex<string>({ maxDistance: 2 });
    index.addMany(['p', 'q', 'r', 's'], fps);
    expect([...rows(index.query(0b1111n, 1))]).toEqual([
      { id: 'p', distance: 0 },
      { id: 's', distance: 0 },
      { id: 'q', distance: 1 },
    ]);
    index.free();
  });

  it('throws TypeError naming the value for anything but an object of array-likes', () => {
    for (const bad of [null, undefined, 3, 'ab', [1, 2], new Uint32Array(2)]) {
      expect(() => rows(bad as never)).toThrow(TypeError);
    }
    expect(() => rows([1, 2] as never)).toThrow(/columns must be an object.*an array of length 2/);
    expect(() => rows({} as never)).toThrow(/at least one column/);
    expect(() => rows({ a: new Uint32Array(1), b: 7 } as never)).toThrow(
      /column b must be an array or typed array, got 7/,
    );
    expect(() => rows({ a: 'text' } as never)).toThrow(/column a .* got "text"/);
    expect(() => rows({ a: { length: -1 } } as never)).toThrow(TypeError);
    expect(() => rows({ a: null } as never)).toThrow(/column a .* got null/);
  });

  it('throws RangeError naming the columns and lengths when they differ, before yielding anything', () => {
    const uneven = { a: new Uint32Array(3), b: new Uint32Array(3), distance: new Uint8Array(2) };
    expect(() => rows(uneven)).toThrow(RangeError);
    expect(() => rows(uneven)).toThrow('columns must have the same length: a has 3 values but distance has 2');
  });

  it('types each row from its columns', () => {
    expectTypeOf<ReturnType<typeof rows<Pairs>>>().toEqualTypeOf<
      IterableIterator<{ a: number; b: number; distance: number }>
    >();
    expectTypeOf<ReturnType<typeof rows<Pairs<BigUint64Array>>>>().toEqualTypeOf<
      IterableIterator<{ a: bigint; b: bigint; distance: number }>
    >();
    expectTypeOf<ReturnType<typeof rows<Neighbors<string[]>>>>().toEqualTypeOf<
      IterableIterator<{ id: string; distance: number }>
    >();
    expectTypeOf<ReturnType<typeof rows<Neighbors>>>().toEqualTypeOf<
      IterableIterator<{ id: number; distance: number }>
    >();
  });
});
