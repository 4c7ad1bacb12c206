// The incremental join (the Deduplicator's): pairs within k between a batch's few new fingerprints and the many
// earlier ones, without sorting every fingerprint per table. Cut 64 bits into blocks and give block q a radius r_q
// such that the r_q + 1 add up to more than k: two fingerprints within k bits then differ in at most r_q bits of
// some block q. For each block, the earlier fingerprints are put in order of the block's value (a counting sort: one
// pass to count, one to place), and each new fingerprint looks up every value within r_q bits of its own and
// compares the fingerprints found there, which lie side by side. A pair found through several blocks is kept by the
// first of them only, so each pair comes out once.

/**
 * Orders the `nOld` fingerprints at `old` (u64) by the `width` bits from `shift` on: `offsets` (2^width + 1 u32)
 * gets where each value's run starts, `sorted` (u64) the fingerprints in that order and `index` (u32) their
 * positions in `old`.
 */
export function probeIndex(old: usize, nOld: i32, shift: i32, width: i32, offsets: usize, sorted: usize, index: usize): void {
  const values = <usize>1 << <usize>width;
  const mask: u64 = (<u64>1 << <u64>width) - 1;
  memory.fill(offsets, 0, (values + 1) << 2);
  for (let i = 0; i < nOld; i++) {
    const v = <usize>((load<u64>(old + (<usize>i << 3)) >> <u64>shift) & mask);
    const at = offsets + ((v + 1) << 2);
    store<u32>(at, load<u32>(at) + 1);
  }
  let sum: u32 = 0;
  for (let v: usize = 0; v <= values; v++) {
    sum += load<u32>(offsets + (v << 2));
    store<u32>(offsets + (v << 2), sum);
  }
  // offsets[v] is now the end of value v - 1's run, i.e. the start of v's: place each, advancing offsets[v], then
  // shift the array back by one.
  for (let i = 0; i < nOld; i++) {
    const x = load<u64>(old + (<usize>i << 3));
    const v = <usize>((x >> <u64>shift) & mask);
    const at = offsets + (v << 2);
    const p = <usize>load<u32>(at);
    store<u32>(at, <u32>p + 1);
    store<u64>(sorted + (p << 3), x);
    store<u32>(index + (p << 2), <u32>i);
  }
  for (let v = values; v > 0; v--) store<u32>(offsets + (v << 2), load<u32>(offsets + ((v - 1) << 2)));
  store<u32>(offsets, 0);
}

/**
 * For the new fingerprints at `fresh` (u64) from `from` to `nNew`: every earlier fingerprint (probeIndex's order for
 * this block) within k bits whose block value is within `radius` bits of its own, and whose difference has more than
 * their radius in each of the `nPrev` earlier blocks (masks u64 at `prev`, radii i32 at `prevRadius`: those found
 * it) goes to `out` as the pair
 * (earlier position u32, new position u32). Returns the next new fingerprint to look up: nNew when done, less when
 * `out` (cap pairs, at least nOld) filled up before it, whose pairs are then all left for the next call. The count of
 * pairs written goes to the i32 at `countAt`.
 */
export function probeQuery(
  fresh: usize,
  from: i32,
  nNew: i32,
  shift: i32,
  width: i32,
  radius: i32,
  offsets: usize,
  sorted: usize,
  index: usize,
  k: i32,
  prev: usize,
  prevRadius: usize,
  nPrev: i32,
  out: usize,
  cap: i32,
  countAt: usize,
): i32 {
  const mask: u64 = (<u64>1 << <u64>width) - 1;
  const top: u64 = <u64>1 << <u64>width;
  let count = 0;
  for (let j = from; j < nNew; j++) {
    const y = load<u64>(fresh + (<usize>j << 3));
    const v = (y >> <u64>shift) & mask;
    const mark = count;
    // Every flip of c bits among width, c = 0..radius, in Gosper's order.
    for (let c = 0; c <= radius && c <= width; c++) {
      let flip: u64 = (<u64>1 << <u64>c) - 1;
      while (flip < top) {
        const w = <usize>(v ^ flip);
        const end = load<u32>(offsets + ((w + 1) << 2));
        for (let e = load<u32>(offsets + (w << 2)); e < end; e++) {
          const d = y ^ load<u64>(sorted + (<usize>e << 3));
          if (<i32>popcnt<u64>(d) > k) continue;
          let seen = false;
          for (let t = 0; t < nPrev; t++) {
            if (<i32>popcnt<u64>(d & load<u64>(prev + (<usize>t << 3))) <= load<i32>(prevRadius + (<usize>t << 2))) {
              seen = true;
              break;
            }
          }
          if (seen) continue;
          if (count >= cap) {
            store<i32>(countAt, mark);
            return j;
          }
          store<u32>(out + (<usize>count << 3), load<u32>(index + (<usize>e << 2)));
          store<u32>(out + (<usize>count << 3) + 4, <u32>j);
          count++;
        }
        if (flip == 0) break;
        // Gosper's hack: the next larger number with as many bits set.
        const low = flip & (~flip + 1);
        const ripple = flip + low;
        flip = (((ripple ^ flip) >> 2) / low) | ripple;
      }
    }
  }
  store<i32>(countAt, count);
  return nNew;
}
