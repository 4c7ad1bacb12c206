// The shapes of the library's bulk results, and rows() to read any of them as objects. Pairs and neighbours
// come back as columns (typed arrays where the values are numbers): one allocation per column instead of one
// object per result, and ready to hand to clusters(), a worker or a file as they are.
import { show } from './errors.js';

/**
 * Pairs of positions with their Hamming distances, as columns: pair i is (a[i], b[i]) at distance distance[i].
 * Returned by pairsWithinDistance, selfPairsWithinDistance, findNearDuplicates and dedup().pairs (positions in
 * the fingerprints or documents given, Uint32Array), and by the ClickHouse index's pairs() (fingerprint ids,
 * BigUint64Array). Read them as objects with {@link rows}.
 */
export interface Pairs<Index extends Uint32Array | BigUint64Array = Uint32Array> {
  /** The first member of each pair. */
  a: Index;
  /** The second member of each pair. */
  b: Index;
  /** The Hamming distance of each pair. */
  distance: Uint8Array;
}

/**
 * The neighbours of one query, as columns, nearest first: neighbour i is id[i] at distance distance[i].
 * nearest() returns positions (`Neighbors<Uint32Array>`); FingerprintIndex.query() returns the index's ids
 * (`Neighbors<Id[]>`); the ClickHouse index's query() returns fingerprint ids (`Neighbors<BigUint64Array>`).
 * Read them as objects with {@link rows}.
 */
export interface Neighbors<Ids extends ArrayLike<unknown> = Uint32Array> {
  /** The neighbours: positions or ids. */
  id: Ids;
  /** The Hamming distance of each neighbour to the query. */
  distance: Uint8Array;
}

/** Columns of equal length, one property each (Pairs, Neighbors, or any object of arrays or typed arrays). */
export type Columns<T> = { readonly [K in keyof T]: ArrayLike<unknown> };

/** One row of a columns object: each column's value at one position, e.g. `{ a, b, distance }` of Pairs. */
export type Row<T extends Columns<T>> = { [K in keyof T]: T[K][number] };

/**
 * The rows of a columns result as objects, in order: `for (const { a, b, distance } of rows(pairs))`, or
 * `[...rows(index.query(fp))]` for `{ id, distance }` objects. Checks the columns first: a TypeError when
 * `columns` is not an object of array-likes, a RangeError naming the columns when their lengths differ.
 */
export function rows<T extends Columns<T>>(columns: T): IterableIterator<Row<T>> {
  if (columns === null || typeof columns !== 'object' || Array.isArray(columns) || ArrayBuffer.isView(columns))
    throw new TypeError(`columns must be an object of arrays or typed arrays, got ${show(columns)}`);
  const keys = Object.keys(columns) as (keyof T & string)[];
  if (keys.length === 0) throw new TypeError('columns must have at least one column, got an empty object');
  let length = -1;
  let first = '';
  for (const key of keys) {
    const column = columns[key] as unknown;
    const n =
      column !== null && (typeof column === 'object' || typeof column === 'string')
        ? (column as { length?: unknown }).length
        : undefined;
    if (typeof column === 'string' || typeof n !== 'number' || !Number.isInteger(n) || n < 0)
      throw new TypeError(`column ${key} must be an array or typed array, got ${show(column)}`);
    if (length < 0) {
      length = n;
      first = key;
    } else if (n !== length) {
      throw new RangeError(`columns must have the same length: ${first} has ${length} values but ${key} has ${n}`);
    }
  }
  return each(columns, keys, length);
}

function* each<T extends Columns<T>>(columns: T, keys: (keyof T & string)[], length: number): Generator<Row<T>> {
  for (let i = 0; i < length; i++) {
    const row = {} as Record<string, unknown>;
    for (const key of keys) row[key] = columns[key][i];
    yield row as Row<T>;
  }
}
