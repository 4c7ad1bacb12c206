// Exact copies, found before the join (src/dedup/exact-copies.ts): a 128-bit content hash per document (XXH3-64
// with seeds 0 and 1), and the first document with each key through an open-addressing hash table, in O(n).
import { xxh3, SEED_HIGH } from './xxh3';

/** Two u64 per document (UTF-8 at `text`, document d spanning offsets[d]..offsets[d+1], u32): its content hash. */
export function contentHashes(text: usize, offsets: usize, count: i32, out: usize): void {
  for (let d = 0; d < count; d++) {
    let p = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let len = <usize>load<u32>(offsets + (<usize>d << 2), 4) - <usize>(p - text);
    store<u64>(out + (<usize>d << 4), xxh3(p, len, 0));
    store<u64>(out + (<usize>d << 4), xxh3(p, len, SEED_HIGH), 8);
  }
}

/**
 * For each of n keys (`words` u64 each, at `keys`), the index of the first key equal to it (u32, to `first`).
 * `table` holds `slots` u32 (a power of two above n), zeroed here; a slot holds 1 + the index of a first key.
 */
export function firstOfEqual(keys: usize, n: i32, words: i32, table: usize, slots: u32, first: usize): void {
  memory.fill(table, 0, <usize>slots << 2);
  let mask = slots - 1;
  let stride = <usize>words << 3;
  for (let i = 0; i < n; i++) {
    let k = keys + <usize>i * stride;
    let lo = load<u64>(k);
    let hi: u64 = words == 2 ? load<u64>(k, 8) : 0;
    // Keys may be fingerprints (not uniformly spread): mix before taking the slot.
    let h = (lo ^ (hi * 0x9E3779B97F4A7C15)) * 0xBF58476D1CE4E5B9;
    let s = <u32>(h >> 32) & mask;
    for (;;) {
      let e = load<u32>(table + (<usize>s << 2));
      if (e == 0) {
        store<u32>(table + (<usize>s << 2), <u32>i + 1);
        store<u32>(first + (<usize>i << 2), <u32>i);
        break;
      }
      let o = keys + <usize>(e - 1) * stride;
      if (load<u64>(o) == lo && (words == 1 || load<u64>(o, 8) == hi)) {
        store<u32>(first + (<usize>i << 2), e - 1);
        break;
      }
      s = (s + 1) & mask;
    }
  }
}
