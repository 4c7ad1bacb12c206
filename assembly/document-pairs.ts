// The document pairs that a chunk of the join's fingerprint pairs stands for, as connected-clusters verification
// takes them (src/dedup/verify-candidates.ts, DocumentPairBatch): each fingerprint's documents paired with the
// other's, without the pairs the forest connects already and those whose set sizes rule Jaccard out, written to a
// bounded batch. Here rather than in JavaScript: on 2 GB of edited copies the loop took 2 s of the calling thread.
import { root } from './verify-pairs';

/** A member index that says "this fingerprint pair has not been started" (acrossPairs' state). */
// @ts-ignore: decorator
@inline const NOT_STARTED: u32 = 0xffffffff;

/** The root of the one tree that members[s..e) (documents) are all in, or -1. */
function oneTree(forest: usize, members: usize, s: u32, e: u32): i64 {
  let r = root(forest, <usize>load<u32>(members + (<usize>s << 2)));
  for (let x = s + 1; x < e; x++) if (root(forest, <usize>load<u32>(members + (<usize>x << 2))) != r) return -1;
  return <i64>r;
}

/**
 * Expands fingerprint pairs (fa[p], fb[p], fd[p]: u32, u32, u8) into document pairs: fingerprint q's documents are
 * members[start[q]..start[q + 1]) (u32). A pair of two one-document fingerprints is written as it is (the walk has
 * applied the size rule); a pair whose two sides are each one tree, and the same one, is passed over whole; other
 * pairs are expanded, each document pair kept when its set sizes (u32 per document at `sizes`, 0 for none) may reach
 * `threshold`. A document pair is written (smaller index first, to outA, outB, outD) unless `forest` (u32 parents)
 * connects it. Starts at state[0] (the fingerprint pair) and, within it, at member state[1] and state[2] of its two
 * sides (NOT_STARTED: from its beginning); writes from `count` and stops when `capacity` pairs are written, state
 * saved for the call after the caller has taken them (and updated the forest). Returns the pairs written in all;
 * state[0] == n when every fingerprint pair is done.
 */
export function acrossPairs(
  start: usize, members: usize, fa: usize, fb: usize, fd: usize, n: u32, forest: usize, sizes: usize, threshold: f64,
  outA: usize, outB: usize, outD: usize, count: u32, capacity: u32, state: usize
): u32 {
  let p = load<u32>(state);
  let x0 = load<u32>(state, 4);
  let y0 = load<u32>(state, 8);
  for (; p < n; p++) {
    let g1 = <usize>load<u32>(fa + (<usize>p << 2));
    let g2 = <usize>load<u32>(fb + (<usize>p << 2));
    let d = load<u8>(fd + <usize>p);
    let s1 = load<u32>(start + (g1 << 2)), e1 = load<u32>(start + (g1 << 2), 4);
    let s2 = load<u32>(start + (g2 << 2)), e2 = load<u32>(start + (g2 << 2), 4);
    let single = e1 - s1 == 1 && e2 - s2 == 1;
    let x = s1, y = s2;
    if (x0 != NOT_STARTED) {
      x = x0;
      y = y0;
      x0 = NOT_STARTED;
    } else if (!single) {
      let r1 = oneTree(forest, members, s1, e1);
      if (r1 != -1 && r1 == oneTree(forest, members, s2, e2)) continue;
    }
    for (; x < e1; x++, y = s2) {
      let u = load<u32>(members + (<usize>x << 2));
      for (; y < e2; y++) {
        if (count == capacity) {
          store<u32>(state, p);
          store<u32>(state, x, 4);
          store<u32>(state, y, 8);
          return count;
        }
        let v = load<u32>(members + (<usize>y << 2));
        if (!single && sizes != 0) {
          let su = <f64>load<u32>(sizes + (<usize>u << 2));
          let sv = <f64>load<u32>(sizes + (<usize>v << 2));
          // sizesMayPass (verify-candidates.ts), in the same f64 steps.
          if (min(su, sv) < threshold * max(su, sv) - 1e-6) continue;
        }
        if (root(forest, <usize>u) == root(forest, <usize>v)) continue;
        store<u32>(outA + (<usize>count << 2), min(u, v));
        store<u32>(outB + (<usize>count << 2), max(u, v));
        store<u8>(outD + <usize>count, d);
        count++;
      }
    }
  }
  store<u32>(state, n);
  store<u32>(state, NOT_STARTED, 4);
  store<u32>(state, NOT_STARTED, 8);
  return count;
}
