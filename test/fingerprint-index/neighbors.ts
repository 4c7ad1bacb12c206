// Expected answers of FingerprintIndex queries, written as { id, distance } objects and compared as the columns
// query() returns.
import type { FingerprintId, Neighbors } from '../../src/index.js';

/** One expected neighbour. */
export interface Neighbor {
  id: FingerprintId;
  distance: number;
}

/** The columns query() returns for the neighbours listed, in that order. */
export function columns(list: readonly Neighbor[]): Neighbors<FingerprintId[]> {
  return { id: list.map((n) => n.id), distance: Uint8Array.from(list, (n) => n.distance) };
}
