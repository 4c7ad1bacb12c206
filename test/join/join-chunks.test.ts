// The join walked in chunks with groups (walkInChunks, dedup's connected clusters): a pair of one group is never
// emitted, every other pair within k is emitted exactly once, and groups that grow between chunks give the plain
// join's connected components. Against the plain all-pairs reference, with tiny chunks (the walk resumes inside
// runs again and again), on clustered fingerprints whose runs mix many groups (the walk orders such runs by group).
import { describe, expect, it } from 'vitest';
import { ChunkWalk, NO_GROUP, type SizeFilter, tableShares, walkInChunks } from '../../src/join/join.js';
import { bruteForcePlan, planJoin, planWithBlocks, type JoinPlan } from '../../src/join/join-plan.js';
import { planWithRadii } from '../../src/join/join-probe.js';
import { bruteForce, unionFind } from './join-reference.js';
import { rng } from '../reference.js';

/** Clustered fingerprints: `centres` random ones, each copied many times with 0-3 of its bits flipped. */
function clustered(n: number, centres: number, bits: 64 | 128, seed: number): BigUint64Array {
  return clusteredWithCentres(n, centres, bits, seed).fps;
}

/** clustered's fingerprints with the centre each one was copied from (`flips` of its bits flipped at most). */
function clusteredWithCentres(
  n: number,
  centres: number,
  bits: 64 | 128,
  seed: number,
  flips = 3,
): { fps: BigUint64Array; centre: Uint32Array } {
  const next = rng(seed);
  const words = bits / 64;
  const random = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
  const base = Array.from({ length: centres * words }, random);
  // Centres close to each other too, so that runs hold several groups.
  for (let c = 1; c < centres; c += 2)
    for (let w = 0; w < words; w++) base[c * words + w] = base[(c - 1) * words + w]! ^ (1n << BigInt(c % 64));
  const fps = new BigUint64Array(n * words);
  const centre = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(next() * centres);
    centre[i] = c;
    for (let w = 0; w < words; w++) fps[i * words + w] = base[c * words + w]!;
    for (let f = Math.floor(next() * (flips + 1)); f > 0; f--) {
      const bit = Math.floor(next() * bits);
      fps[i * words + (bit >> 6)]! ^= 1n << BigInt(bit & 63);
    }
  }
  return { fps, centre };
}

/** Every pair the chunked walk emits, as "a,b,distance", with fixed groups (and sizes, when given). */
function walked(
  fps: BigUint64Array,
  plan: JoinPlan,
  groups: Uint32Array,
  chunk: number,
  sizes: SizeFilter | null = null,
): string[] {
  const got: string[] = [];
  walkInChunks(
    fps,
    plan,
    (p) => p.a.forEach((a, i) => got.push(`${a},${p.b[i]},${p.distance[i]}`)),
    () => groups,
    chunk,
    sizes,
  );
  return got;
}

function plansFor(n: number, k: number, bits: 64 | 128): Array<[string, JoinPlan]> {
  const plans: Array<[string, JoinPlan]> = [
    ['compare all', bruteForcePlan(n, k, bits)],
    ['model', planJoin(n, k, bits)],
    [`${k + 2} blocks`, planWithBlocks(k, bits, k + 2)],
  ];
  if (bits === 64) plans.push(['probes', probePlanFor(k)]);
  return plans;
}

/** A probe plan of 5 blocks (13, 13, 13, 13 and 12 bits) whose radii add up to k + 1 - 5, the first ones larger. */
function probePlanFor(k: number): JoinPlan {
  const left = Math.max(0, k + 1 - 5);
  return planWithRadii(
    k,
    Array.from({ length: 5 }, (_, q) => Math.floor(left / 5) + (q < left % 5 ? 1 : 0)),
  );
}

describe('walkInChunks with groups', () => {
  for (const bits of [64, 128] as const) {
    const n = 1500;
    const k = bits === 64 ? 4 : 8;
    const fps = clustered(n, 40, bits, bits);
    const plain = bruteForce(fps, k, bits);
    for (const [name, plan] of plansFor(n, k, bits)) {
      it(`fixed groups: every pair across groups once, none inside one (${bits} bits, ${name})`, () => {
        const next = rng(7);
        // A few large groups, some fingerprints in none (NO_GROUP: never skipped).
        const groups = Uint32Array.from({ length: n }, () => (next() < 0.1 ? NO_GROUP : Math.floor(next() * 5)));
        const got = walked(fps, plan, groups, 37);
        const want = plain.filter((s) => {
          const [a, b] = s.split(',').map(Number) as [number, number];
          return groups[a] === NO_GROUP || groups[a] !== groups[b];
        });
        expect(want.length).toBeGreaterThan(1000);
        expect(got.sort()).toEqual(want.sort());
      });

      it(`sizes: a pair is left out exactly when its set sizes rule out the threshold (${bits} bits, ${name})`, () => {
        const next = rng(11);
        // Size ranges of 1 to 3 documents' sets, many on the boundary: at threshold 3/5, sizes 3 and 5 may still
        // reach it (J = 3/5 when the smaller set is inside the larger) and must be emitted.
        const range = new Uint32Array(2 * n);
        for (let i = 0; i < n; i++) {
          const lo = [3, 5, 6, 10, 0, 1][Math.floor(next() * 6)]! * (1 + Math.floor(next() * 3));
          range[2 * i] = lo;
          range[2 * i + 1] = next() < 0.5 ? lo : lo + Math.floor(next() * 4);
        }
        // Exact integers: max(A) < 3/5 · min(B) is 5 · max(A) < 3 · min(B).
        const apart = (x: number, y: number) => 5 * range[2 * x + 1]! < 3 * range[2 * y]!;
        // Without groups and with them (pairs inside one group are not walked at all; the size rule takes the rest).
        const none = Uint32Array.from({ length: n }, () => NO_GROUP);
        const few = Uint32Array.from({ length: n }, () => (next() < 0.1 ? NO_GROUP : Math.floor(next() * 8)));
        for (const groups of [none, few]) {
          const got = walked(fps, plan, groups, 41, { range, threshold: 0.6 });
          const want = plain.filter((s) => {
            const [a, b] = s.split(',').map(Number) as [number, number];
            return !apart(a, b) && !apart(b, a) && (groups[a] === NO_GROUP || groups[a] !== groups[b]);
          });
          expect(want.length).toBeGreaterThan(100);
          expect(want.length).toBeLessThan(plain.length / 2);
          expect(got.sort()).toEqual(want.sort());
        }
      });

      it(`groups that grow with the pairs emitted give the plain join's components (${bits} bits, ${name})`, () => {
        const parent = Uint32Array.from({ length: n }, (_, i) => i);
        const find = (x: number): number => {
          while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
          return x;
        };
        let emitted = 0;
        walkInChunks(
          fps,
          plan,
          (p) => {
            emitted += p.a.length;
            p.a.forEach((a, i) => {
              const ra = find(a);
              const rb = find(p.b[i]!);
              if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
            });
          },
          () => Uint32Array.from({ length: n }, (_, i) => find(i)),
          53,
        );
        expect(Array.from({ length: n }, (_, i) => find(i))).toEqual(unionFind(n, plain));
        // Pairs inside groups already formed are not emitted: far fewer than the plain join's.
        expect(emitted).toBeLessThan(plain.length / 4);
      });
    }
  }
});

describe('walkInChunks with groups of near fingerprints', () => {
  // Groups are the clusters themselves, as dedup's are once formed: the 64-bit walk skips a whole segment of
  // another group when its first member is farther than k plus the segment's radius, or when every member agrees
  // with the fingerprint on a block before the table's key (assembly/join.ts scanBlocks). Centres two by two one
  // bit apart, copies with up to `flips` bits flipped, k from below to above the groups' spread: pairs across
  // groups at every distance up to k, segments skipped and not, and every pair across groups must come out once.
  for (const bits of [64, 128] as const) {
    // At 128 bits k = 18 too: the planner's plan has more than 16 blocks there.
    for (const k of bits === 64 ? [3, 6, 9] : [3, 6, 9, 18]) {
      const n = 1200;
      const { fps, centre } = clusteredWithCentres(n, 24, bits, 100 + k, 4);
      const plain = bruteForce(fps, k, bits);
      const want = plain.filter((s) => {
        const [a, b] = s.split(',').map(Number) as [number, number];
        return centre[a] !== centre[b];
      });
      for (const [name, plan] of plansFor(n, k, bits)) {
        it(`groups by centre, k = ${k}: every pair across groups once (${bits} bits, ${name})`, () => {
          expect(want.length).toBeGreaterThan(200);
          expect(walked(fps, plan, centre, 29).sort()).toEqual([...want].sort());
        });
      }
    }
  }
});

describe('walkInChunks at the skip boundary', () => {
  // A fingerprint exactly k + r from the first member of another group's segment of radius r, and exactly k from
  // its member on the way there: the segment must not be skipped (the bound is strict).
  for (const bits of [64, 128] as const) {
    for (const k of [3, 6, 12]) {
      for (const r of [1, 2, 5]) {
        it(`a fingerprint at k + r from a segment of radius r still meets its member at k (${bits} bits, k = ${k}, r = ${r})`, () => {
          const next = rng(1000 * k + r + bits);
          const random = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
          const bitsOf = (count: number, from: number) => Array.from({ length: count }, (_, b) => from + b * 2);
          // Bits of the whole fingerprint (at 128 bits, word 1 holds bits 64-127).
          const flip = (x: bigint[], at: number[]) =>
            at.reduce((y, b) => y.map((w, i) => (i === b >> 6 ? w ^ (1n << BigInt(b & 63)) : w)), x);
          const first = Array.from({ length: bits / 64 }, random);
          const member = flip(first, bitsOf(r, 1)); // r odd bits from bit 1
          const lone = flip(member, bitsOf(k, bits - 24)); // k even bits near the top: k + r from first, k from member
          // The lone fingerprint first (group 0), then the segment: seven copies of `first`, then `member` (group 1).
          const fps = BigUint64Array.from([lone, ...Array.from({ length: 7 }, () => first), member].flat());
          const groups = Uint32Array.from({ length: 9 }, (_, i) => (i === 0 ? 0 : 1));
          const want = bruteForce(fps, k, bits).filter((s) => s.startsWith('0,'));
          expect(want).toEqual([`0,8,${k}`]);
          for (const [, plan] of plansFor(9, k, bits)) expect(walked(fps, plan, groups, 5)).toEqual(want);
        });
      }
    }
  }
});

describe('ChunkWalk', () => {
  const n = 1500;
  const fps = clustered(n, 40, 64, 5);

  for (const bits of [64, 128] as const)
    it(`walks taking turns on one thread, over shares of the tables, emit every pair across groups once (${bits} bits)`, () => {
      const k = bits === 64 ? 4 : 8;
      const fps = clustered(n, 40, bits, 5);
      const plain = bruteForce(fps, k, bits);
      const plan = planJoin(n, k, bits);
      const shares = tableShares(plan, 2);
      expect(shares.every((s) => s.length > 0)).toBe(true);
      const next = rng(3);
      const groups = Uint32Array.from({ length: n }, () => (next() < 0.1 ? NO_GROUP : Math.floor(next() * 5)));
      // Each walk in its own slot: their tables would overwrite each other's in one.
      const walks = shares.map((tables, slot) => new ChunkWalk(fps, plan, tables, () => groups, 29, null, slot));
      const got: string[] = [];
      const ended = walks.map(() => false);
      for (let turn = 0; ended.includes(false); turn++) {
        const w = turn % walks.length;
        if (ended[w]) continue;
        const step = walks[w]!.next();
        expect(step.pairs.a.length).toBeLessThanOrEqual(29);
        ended[w] = step.last;
        step.pairs.a.forEach((a, i) => got.push(`${a},${step.pairs.b[i]},${step.pairs.distance[i]}`));
      }
      expect(() => walks[0]!.next()).toThrow(/after its last chunk/);
      const want = plain.filter((s) => {
        const [a, b] = s.split(',').map(Number) as [number, number];
        return groups[a] === NO_GROUP || groups[a] !== groups[b];
      });
      expect(want.length).toBeGreaterThan(1000);
      expect(got.sort()).toEqual(want.sort());
      expect(walks[0]!.total + walks[1]!.total).toBe(want.length);
    });

  it('a walk of no tables, or of fewer than two fingerprints, ends at once with no pairs', () => {
    const plan = planJoin(n, 4, 64);
    const none = new ChunkWalk(fps, plan, [], () => new Uint32Array(n).fill(NO_GROUP));
    expect(none.next()).toEqual({
      pairs: { a: new Uint32Array(0), b: new Uint32Array(0), distance: new Uint8Array(0) },
      last: true,
    });
    const one = new ChunkWalk(fps.subarray(0, 1), planJoin(1, 4, 64), [0], () => new Uint32Array(1));
    expect(one.next().last).toBe(true);
  });
});
