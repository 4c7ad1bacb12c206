// The all-pairs join by multi-index probes (Norouzi, Punjani and Fleet, "Fast Search in Hamming Space with
// Multi-Index Hashing", CVPR 2012), each pair once. The 64 bits are cut into blocks, block q with a radius r_q, the
// r_q + 1 adding up to more than k: a pair within k then differs in at most r_q bits of some block. For each block
// the fingerprints are put in order of its value (probeIndex, assembly/probe-join.ts), and each value's run looks up
// the values within r_q bits of its own, comparing the fingerprints of both runs: only values above its own (a pair
// of two values is then met from one side), and in its own run only those after each member. On real text fingerprints,
// which cluster, tables of block keys meet near pairs in long runs: 81,287 fingerprints at k = 12 (400 MB of edited
// copies) took 1.9 s by the cheapest walk plan, and 0.5 s here.
import { NO_ROOT, pairKey, sizesMayPass } from './join';

/**
 * Writes the pairs within k found through one block (width bits from `shift`) to `out` as pair keys (at most
 * `cap`): `sorted` (u64) and `index` (u32) are the n fingerprints in order of the block's value with their numbers,
 * `offsets` (2^width + 1 u32) where each value's run starts, `flips` the nFlips masks of at most the block's radius
 * bits. A pair is kept by the first block within its radius only: its difference must have more than prevRadius[t]
 * bits in prev[t] (u64 masks) for each of the nPrev earlier blocks. With `roots` (u32 per fingerprint number, or 0),
 * a pair of one group is passed over, and with `sizes` a pair that the shingle-set sizes rule out (joinWalk64's
 * rules). The fingerprints are taken a value's run at a time, each flip looked up once for the whole run (two
 * offsets and the start of the other run, often cache misses; the planner costs a lookup as 4 candidates), and runs
 * hold several fingerprints where a probe plan pays (10 on average at 81,287 fingerprints and 13-bit blocks): the
 * join of those took 695-701 ms with a lookup per fingerprint and 568-600 ms with one per run.
 * Resumes from and saves the position in `state` (u32: fingerprint, flip, candidate + 1; state[2] becomes 1 when
 * the block is done). Returns the number of pairs written.
 */
export function joinProbe64(
  sorted: usize, index: usize, n: u32, offsets: usize, shift: u32, width: u32, flips: usize, nFlips: u32, k: u32,
  prev: usize, prevRadius: usize, nPrev: u32, pairShift: u32, out: usize, cap: u32, state: usize, roots: usize,
  sizes: usize, ratio: f64,
): u32 {
  const mask: u64 = (<u64>1 << <u64>width) - 1;
  let p = load<u32>(state);
  let q = load<u32>(state, 4);
  let resume = load<u32>(state, 12);
  let count: u32 = 0;
  while (p < n) {
    const v = <u32>((load<u64>(sorted + (<usize>p << 3)) >> <u64>shift) & mask);
    const runStart = load<u32>(offsets + (<usize>v << 2));
    const runEnd = load<u32>(offsets + ((<usize>v + 1) << 2));
    // A walk resumed inside a run goes on from its fingerprint for the flip it stopped at, then from the run's start.
    let from = p;
    for (; q < nFlips; q++, from = runStart) {
      const w = v ^ load<u32>(flips + (<usize>q << 2));
      if (w < v) continue;
      const otherStart = w == v ? 0 : load<u32>(offsets + (<usize>w << 2));
      const otherEnd = w == v ? runEnd : load<u32>(offsets + ((<usize>w + 1) << 2));
      if (otherStart == otherEnd) continue;
      for (let f = from; f < runEnd; f++) {
        const x = load<u64>(sorted + (<usize>f << 3));
        const a = load<u32>(index + (<usize>f << 2));
        const ra = roots != 0 ? load<u32>(roots + (<usize>a << 2)) : NO_ROOT;
        let e = w == v ? f + 1 : otherStart;
        if (resume != 0) {
          e = resume - 1;
          resume = 0;
        }
        for (; e < otherEnd; e++) {
          const d = x ^ load<u64>(sorted + (<usize>e << 3));
          if (<u32>popcnt<u64>(d) > k) continue;
          let earlier = false;
          for (let t: u32 = 0; t < nPrev; t++) {
            if (<u32>popcnt<u64>(d & load<u64>(prev + (<usize>t << 3))) <= load<u32>(prevRadius + (<usize>t << 2))) {
              earlier = true;
              break;
            }
          }
          if (earlier) continue;
          const b = load<u32>(index + (<usize>e << 2));
          if (ra != NO_ROOT && load<u32>(roots + (<usize>b << 2)) == ra) continue;
          if (sizes != 0 && !sizesMayPass(sizes, a, b, ratio)) continue;
          if (count == cap) {
            store<u32>(state, f);
            store<u32>(state, q, 4);
            store<u32>(state, e + 1, 12);
            return count;
          }
          store<u64>(out + (<usize>count << 3), pairKey(a, b, pairShift));
          count++;
        }
      }
    }
    q = 0;
    p = runEnd;
  }
  store<u32>(state, n);
  store<u32>(state, 0, 4);
  store<u32>(state, 1, 8);
  store<u32>(state, 0, 12);
  return count;
}
