// The join by multi-index probes (assembly/join-probe.ts, src/join/join-probe.ts) against the plain all-pairs
// reference: every pair within k exactly once, with its distance, whatever the blocks and radii, on random
// fingerprints, on clustered ones (long runs of one block value), on copies, and at distance exactly k and k + 1.
// Its chunked walks with groups and sizes are in join-chunks.test.ts (the probe plan is one of its plans).
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../src/index.js';
import { planJoinFor } from '../../src/join/join-estimate.js';
import { pairsByDistance, planWithRadii, probeFlips, probePlan } from '../../src/join/join-probe.js';
import { binomial } from '../../src/join/join-plan.js';
import { findWithPlan } from '../../src/join/join.js';
import { findInThreads } from '../../src/join/find-near-duplicates.js';
import { rng } from '../reference.js';
import { asStrings, bruteForce, popcount32 } from './join-reference.js';

beforeAll(async () => {
  await init();
});

/** `centres` random fingerprints, each copied `copies` times with 0 to `spread` of its bits flipped, shuffled. */
function clustered(centres: number, copies: number, spread: number, seed: number): BigUint64Array {
  const random = rng(seed);
  const n = centres * copies;
  const halves = new Uint32Array(2 * n);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (let c = 0; c < centres; c++) {
    const lo = (random() * 2 ** 32) >>> 0;
    const hi = (random() * 2 ** 32) >>> 0;
    for (let m = 0; m < copies; m++) {
      const at = order[c * copies + m]! * 2;
      halves[at] = lo;
      halves[at + 1] = hi;
      for (let f = Math.floor(random() * (spread + 1)); f > 0; f--) {
        const bit = Math.floor(random() * 64);
        halves[at + (bit >>> 5)]! ^= 1 << (bit & 31);
      }
    }
  }
  return new BigUint64Array(halves.buffer);
}

/** Radii for `blocks` blocks adding up (with the blocks) to k + 1, handed out from `seed` at random. */
function radiiFor(k: number, blocks: number, seed: number): number[] {
  const random = rng(seed);
  const radii = new Array<number>(blocks).fill(0);
  const width = Math.floor(64 / blocks);
  for (let left = k + 1 - blocks; left > 0; left--) {
    let q = Math.floor(random() * blocks);
    while (radii[q]! >= width) q = (q + 1) % blocks;
    radii[q]!++;
  }
  return radii;
}

describe('probeFlips', () => {
  it('every mask of at most r bits of w, once, fewest bits first (w = 0 to 16, r = 0 to 4)', () => {
    for (let w = 0; w <= 16; w++) {
      for (let r = 0; r <= 4; r++) {
        const flips = Array.from(probeFlips(w, r));
        const want: number[] = [];
        for (let c = 0; c <= r; c++) for (let x = 0; x < 2 ** w; x++) if (popcount32(x) === c) want.push(x);
        expect(new Set(flips).size).toBe(flips.length);
        expect([...flips].sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
        let bitsSoFar = 0;
        for (const f of flips) {
          expect(popcount32(f)).toBeGreaterThanOrEqual(bitsSoFar);
          bitsSoFar = popcount32(f);
        }
        let count = 0;
        for (let c = 0; c <= Math.min(r, w); c++) count += binomial(w, c);
        expect(flips.length).toBe(count);
      }
    }
  });
});

describe('the probe join against comparing all pairs', () => {
  it('seeded random blocks and radii, on random and clustered fingerprints, k = 0 to 20', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 4, max: 10 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        (k, blocks, seed, isClustered) => {
          // More blocks than k + 1 leave them all at radius 0: still every pair, some found by several blocks.
          const plan = planWithRadii(k, radiiFor(k, blocks, seed));
          const fps = isClustered ? clustered(12, 25, k + 2, seed) : clustered(300, 1, 0, seed);
          expect(asStrings(findWithPlan(fps, plan))).toEqual(bruteForce(fps, k, 64));
        },
      ),
      { numRuns: 60, seed: 20261205 },
    );
  });

  it('pairs at distance exactly k are found and at k + 1 are not, with the bits in one block or spread', () => {
    const random = rng(7);
    for (const k of [1, 3, 6, 12, 16]) {
      const fps = new BigUint64Array(64);
      for (let i = 0; i < 32; i++) {
        const x = (BigInt((random() * 2 ** 32) >>> 0) << 32n) | BigInt((random() * 2 ** 32) >>> 0);
        // Pair i: k or k + 1 flipped bits, packed at the bottom (one block) or spread over every block.
        const flips = i % 2 === 0 ? k : k + 1;
        let mask = 0n;
        for (let f = 0; f < flips; f++) mask |= 1n << BigInt(i % 4 < 2 ? f : (f * 5) % 64);
        fps[2 * i] = x;
        fps[2 * i + 1] = x ^ mask;
      }
      for (const radii of [radiiFor(k, 4, k), radiiFor(k, 5, k + 1), [k, 0, 0, 0].map((r) => Math.min(r, 16))]) {
        if (radii.reduce((s, r) => s + r + 1, 0) <= k) continue;
        const got = asStrings(findWithPlan(fps, planWithRadii(k, radii)));
        expect(got).toEqual(bruteForce(fps, k, 64));
        expect(got.filter((p) => p.endsWith(`,${k}`)).length).toBeGreaterThanOrEqual(16);
      }
    }
  });

  it('copies: one value held by many fingerprints, and none, one or two fingerprints', () => {
    const same = new BigUint64Array(300).fill(0x0123456789abcdefn);
    const plan = planWithRadii(3, [0, 0, 0, 0]);
    expect(findWithPlan(same, plan).a.length).toBe((300 * 299) / 2);
    expect(asStrings(findWithPlan(same, plan))).toEqual(bruteForce(same, 3, 64));
    for (const n of [0, 1, 2]) {
      const fps = clustered(1, n, 2, n);
      expect(asStrings(findWithPlan(fps, planWithRadii(3, [1, 0, 0, 0])))).toEqual(bruteForce(fps, 3, 64));
    }
  });

  it('a plan whose radii cannot reach k, or a radius wider than its block, is a RangeError', () => {
    expect(() => planWithRadii(12, [2, 2, 2, 2])).toThrow(/within 11 bits only, not k = 12/);
    expect(() => planWithRadii(3, [17, 0, 0, 0])).toThrow(RangeError);
    expect(() => planWithRadii(3, [1, 1])).toThrow(/does not fit block 0 of 32 bits/);
  });
});

/** Pairs of fingerprints at each distance c of their block values, value pair by value pair. */
function pairsByDistanceReference(counts: Uint32Array, width: number): number[] {
  const out = new Array<number>(width + 1).fill(0);
  for (let v = 0; v < counts.length; v++)
    for (let w = v + 1; w < counts.length; w++) out[popcount32(v ^ w)]! += counts[v]! * counts[w]!;
  return out;
}

describe('pairsByDistance (Walsh–Hadamard)', () => {
  it('counts by hand: width 2, counts 1, 2, 3, 4', () => {
    // Distance 1: (0,1) 2 + (0,2) 3 + (1,3) 8 + (2,3) 12; distance 2: (0,3) 4 + (1,2) 6.
    expect(Array.from(pairsByDistance(Uint32Array.of(1, 2, 3, 4), 2))).toEqual([0, 25, 10]);
    expect(Array.from(pairsByDistance(Uint32Array.of(7), 0))).toEqual([0]);
  });

  it('equals counting value pair by value pair on seeded histograms (widths 1 to 10, sparse to full)', () => {
    for (let seed = 0; seed < 60; seed++) {
      const random = rng(seed);
      const width = 1 + (seed % 10);
      const fill = [0.02, 0.3, 1][seed % 3]!;
      const most = [1, 50, 5000][Math.floor(seed / 3) % 3]!;
      const counts = new Uint32Array(2 ** width);
      for (let v = 0; v < counts.length; v++) if (random() < fill) counts[v] = Math.floor(random() * most) + 1;
      const expected = pairsByDistanceReference(counts, width);
      expected[0] = 0;
      expect(Array.from(pairsByDistance(counts, width)), `seed ${seed}, width ${width}`).toEqual(expected);
    }
  });

  it('stays exact with 3 * 10^5 fingerprints in a 16-bit block', () => {
    const counts = new Uint32Array(2 ** 16);
    const random = rng(99);
    for (let i = 0; i < 300_000; i++) counts[Math.floor(random() ** 3 * 2 ** 16)]!++;
    // The reference for the levels costed at 16 bits (MAX_COUNTED: at most 2): from each value, its flips.
    const expected = [0, 0, 0];
    for (let v = 0; v < counts.length; v++) {
      if (counts[v] === 0) continue;
      for (let a = 0; a < 16; a++) {
        const w1 = v ^ (1 << a);
        if (w1 > v) expected[1]! += counts[v]! * counts[w1]!;
        for (let b = a + 1; b < 16; b++) {
          const w2 = v ^ (1 << a) ^ (1 << b);
          if (w2 > v) expected[2]! += counts[v]! * counts[w2]!;
        }
      }
    }
    const got = pairsByDistance(counts, 16);
    expect([got[1], got[2]]).toEqual([expected[1], expected[2]]);
  });
});

describe('choosing the probe plan', () => {
  it('its radii and blocks add up to k + 1, and its pairs are the reference pairs (clustered, k = 12)', () => {
    const fps = clustered(400, 12, 10, 3);
    const plan = probePlan(fps, fps.length, 12);
    expect(plan).not.toBeNull();
    expect(plan!.radii!.reduce((s, r) => s + r + 1, 0)).toBe(13);
    expect(asStrings(findWithPlan(fps, plan!))).toEqual(bruteForce(fps, 12, 64));
  });

  it('is not chosen where one block value holds a large group (a walk skips it whole once clustered)', () => {
    // 6,000 near-duplicates of one fingerprint (one or two bits flipped) and 20,000 spread ones.
    const group = clustered(1, 6000, 2, 11);
    const rest = clustered(2000, 10, 8, 12);
    const fps = new BigUint64Array(group.length + rest.length);
    fps.set(group);
    fps.set(rest, group.length);
    const plan = planJoinFor(fps, fps.length, 12, 64);
    expect(plan.radii).toBeUndefined();
  });

  it('is chosen for clustered fingerprints at k = 12 where comparing all pairs costs more', () => {
    const fps = clustered(4000, 5, 10, 5);
    const plan = planJoinFor(fps, fps.length, 12, 64);
    expect(plan.radii).toBeDefined();
  });

  it('its blocks shared among two pool workers give the same pairs as this thread', async () => {
    const fps = clustered(300, 8, 10, 9);
    const plan = planWithRadii(12, [2, 2, 2, 1, 1]);
    const here = asStrings(findWithPlan(fps, plan));
    expect(asStrings(await findInThreads(fps, plan, 2))).toEqual(here);
    expect(here).toEqual(bruteForce(fps, 12, 64));
  });
});
