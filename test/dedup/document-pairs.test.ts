// The document pairs of the join's fingerprint pairs (DocumentPairBatch.across, expanded in WebAssembly by
// assembly/document-pairs.ts) against the plain expansion it replaced, on seeded random groups, sizes and forests,
// with batches small enough that a fingerprint pair is cut across several, and a forest that each batch handed on
// changes (as verification does) before the expansion goes on.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Pairs } from '../../src/results.js';
import { DocumentPairBatch, sizesMayPass } from '../../src/dedup/verify-candidates.js';
import { forestJoin, forestRoot } from '../../src/dedup/forest.js';
import { rng } from '../reference.js';

/** The plain expansion: for each fingerprint pair, its documents' pairs, in order, handed on `capacity` at a time. */
function plainAcross(
  start: Uint32Array,
  members: Uint32Array,
  pairs: Pairs,
  forest: Uint32Array,
  sizes: Uint32Array | null,
  threshold: number,
  capacity: number,
  take: (batch: number[][]) => void,
): number[][] {
  let batch: number[][] = [];
  const add = (u: number, v: number, d: number): void => {
    if (forestRoot(forest, u) === forestRoot(forest, v)) return;
    batch.push([Math.min(u, v), Math.max(u, v), d]);
    if (batch.length === capacity) {
      take(batch);
      batch = [];
    }
  };
  const oneTree = (s: number, e: number): number => {
    const r = forestRoot(forest, members[s]!);
    for (let x = s + 1; x < e; x++) if (forestRoot(forest, members[x]!) !== r) return -1;
    return r;
  };
  for (let p = 0; p < pairs.a.length; p++) {
    const [s1, e1] = [start[pairs.a[p]!]!, start[pairs.a[p]! + 1]!];
    const [s2, e2] = [start[pairs.b[p]!]!, start[pairs.b[p]! + 1]!];
    const d = pairs.distance[p]!;
    if (e1 - s1 === 1 && e2 - s2 === 1) {
      add(members[s1]!, members[s2]!, d);
      continue;
    }
    const r1 = oneTree(s1, e1);
    if (r1 !== -1 && r1 === oneTree(s2, e2)) continue;
    for (let x = s1; x < e1; x++)
      for (let y = s2; y < e2; y++) {
        const [u, v] = [members[x]!, members[y]!];
        if (sizes && !sizesMayPass(sizes[u]!, sizes[v]!, threshold)) continue;
        add(u, v, d);
      }
  }
  return batch;
}

describe('document pairs of fingerprint pairs (acrossPairs)', () => {
  it('equal the plain expansion, batch by batch, with the forest changed between batches', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 9 }),
        fc.boolean(),
        fc.constantFrom(0.3, 0.6, 0.9, 0.1 + 0.2), // 0.1 + 0.2: sizes 3 and 10 meet the rule's slack
        (seed, capacity, withSizes, threshold) => {
          const next = rng(seed);
          // Documents dealt to fingerprints (one to five each), in shuffled order.
          const docs = 1 + Math.floor(next() * 60);
          const order = Array.from({ length: docs }, (_, i) => i).sort(() => next() - 0.5);
          const startList = [0];
          while (startList.at(-1)! < docs)
            startList.push(Math.min(docs, startList.at(-1)! + 1 + Math.floor(next() ** 3 * 5)));
          const start = Uint32Array.from(startList);
          const members = Uint32Array.from(order);
          const fps = start.length - 1;
          const count = fps < 2 ? 0 : Math.floor(next() * 80);
          const pairs: Pairs = {
            a: new Uint32Array(count),
            b: new Uint32Array(count),
            distance: new Uint8Array(count),
          };
          for (let p = 0; p < count; p++) {
            const x = Math.floor(next() * fps);
            const y = (x + 1 + Math.floor(next() * (fps - 1))) % fps;
            pairs.a[p] = Math.min(x, y);
            pairs.b[p] = Math.max(x, y);
            pairs.distance[p] = Math.floor(next() * 13);
          }
          const sizes = withSizes ? Uint32Array.from({ length: docs }, () => 1 + Math.floor(next() * 40)) : null;
          const initial = Uint32Array.from({ length: docs }, (_, i) => i);
          for (let u = 0; u < docs / 4; u++) forestJoin(initial, Math.floor(next() * docs), Math.floor(next() * docs));
          // Verification's stand-in: each pair handed on joins its documents when its seeded coin says so.
          const coins = Array.from({ length: 4096 }, () => next() < 0.4);
          const verifier = (forest: Uint32Array, seen: number[][]) => (batch: number[][]) => {
            for (const [u, v, d] of batch) {
              if (coins[seen.length % coins.length]) forestJoin(forest, u!, v!);
              seen.push([u!, v!, d!]);
            }
          };
          const plainForest = initial.slice();
          const want: number[][] = [];
          const take = verifier(plainForest, want);
          take(plainAcross(start, members, pairs, plainForest, sizes, threshold, capacity, take));

          const forest = initial.slice();
          const got: number[][] = [];
          const takeGot = verifier(forest, got);
          const batch = new DocumentPairBatch(
            forest,
            (p) => takeGot(Array.from(p.a, (u, q) => [u, p.b[q]!, p.distance[q]!])),
            sizes,
            threshold,
            capacity,
          );
          batch.across({ start, members }, members, pairs);
          batch.flush();
          expect(got).toEqual(want);
          expect(Array.from(forest, (_, d) => forestRoot(forest, d))).toEqual(
            Array.from(plainForest, (_, d) => forestRoot(plainForest, d)),
          );
        },
      ),
      { seed: 20261205, numRuns: 500 },
    );
  });

  it('two batches taking turns (two runs in one process) each expand their own documents', () => {
    // Batch 0: documents 0..5 as fingerprints {0,1} {2} {3,4,5}; batch 1: documents 0..3 as {3} {0,1,2}.
    const runs = [
      { start: Uint32Array.of(0, 2, 3, 6), members: Uint32Array.of(0, 1, 2, 3, 4, 5) },
      { start: Uint32Array.of(0, 1, 4), members: Uint32Array.of(3, 0, 1, 2) },
    ];
    const chunk = (a: number[], b: number[]): Pairs => ({
      a: Uint32Array.from(a),
      b: Uint32Array.from(b),
      distance: Uint8Array.from(a, () => 1),
    });
    const chunks = [
      [chunk([0, 1], [1, 2]), chunk([0], [1])],
      [chunk([0], [2]), chunk([0], [1])],
    ];
    const got: number[][][] = [[], []];
    const batches = runs.map((run, r) => {
      const forest = Uint32Array.from(run.members, (_, i) => i);
      return new DocumentPairBatch(forest, (p) => got[r]!.push(...Array.from(p.a, (u, q) => [u, p.b[q]!])), null, 0, 4);
    });
    for (let c = 0; c < 2; c++)
      for (let r = 0; r < 2; r++) {
        batches[r]!.across(runs[r]!, runs[r]!.members, chunks[c]![r]!);
        batches[r]!.flush();
      }
    const want = runs.map((run, r) => {
      const forest = Uint32Array.from(run.members, (_, i) => i);
      const out: number[][] = [];
      for (const pairs of chunks.map((c) => c[r]!)) {
        const take = (batch: number[][]) => out.push(...batch.map(([u, v]) => [u!, v!]));
        take(plainAcross(run.start, run.members, pairs, forest, null, 0, 4, take));
      }
      return out;
    });
    expect(got).toEqual(want);
    expect(got[0]!.length).toBeGreaterThan(0);
    expect(got[1]!.length).toBeGreaterThan(0);
  });
});
