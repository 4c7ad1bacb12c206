// dedup's band join (src/dedup/size-band.ts): the banded self-join's pairs, as the kernel writes them, become
// sortable pair keys here, so that they stay in WebAssembly memory from the join to the sorted (a, b) order.

/**
 * Writes the pairs (outA[p], outB[p]) with outB[p] < ends[outA[p]] (the band; a tile also emits a few beyond it)
 * to `keys` as min << pairShift | max of their group numbers order[outA[p]] and order[outB[p]] (u64, the keys of
 * assembly/join.ts's sort and unpack). Returns how many were written.
 */
export function bandPairKeys(
  outA: usize, outB: usize, n: i32, ends: usize, order: usize, pairShift: u32, keys: usize
): i32 {
  let kept = 0;
  for (let p = 0; p < n; p++) {
    let a = load<u32>(outA + (<usize>p << 2));
    let b = load<u32>(outB + (<usize>p << 2));
    let x = <u64>load<u32>(order + (<usize>a << 2));
    let y = <u64>load<u32>(order + (<usize>b << 2));
    // Every pair is written; the count moves only past one inside the band (no branch on the band test).
    store<u64>(keys + (<usize>kept << 3), (min(x, y) << <u64>pairShift) | max(x, y));
    kept += <i32>(b < load<u32>(ends + (<usize>a << 2)));
  }
  return kept;
}
