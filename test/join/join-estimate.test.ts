import { describe, expect, it } from 'vitest';
import { findNearDuplicates, joinIfSmall, joinIfSmallHere } from '../../src/join/find-near-duplicates.js';
import { joinSurelyExceeds, planJoinFor } from '../../src/join/join-estimate.js';
import { planJoin } from '../../src/join/join-plan.js';
import { findWithPlan } from '../../src/join/join.js';
import { rng } from '../reference.js';
import { asStrings, bruteForce } from './join-reference.js';

/**
 * Near-duplicate groups as a corpus of edited copies gives them: `groups` random centres, each with `copies`
 * relatives 0 to `spread` bits away, in a seeded random order (32-bit halves, low half first).
 */
function clustered(groups: number, copies: number, spread: number, bits: 64 | 128, seed: number): BigUint64Array {
  const random = rng(seed);
  const halvesPer = bits / 32;
  const n = groups * copies;
  const halves = new Uint32Array(n * halvesPer);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (let g = 0; g < groups; g++) {
    const centre = Array.from({ length: halvesPer }, () => (random() * 2 ** 32) >>> 0);
    for (let c = 0; c < copies; c++) {
      const at = order[g * copies + c]! * halvesPer;
      for (let h = 0; h < halvesPer; h++) halves[at + h] = centre[h]!;
      const flips = Math.floor(random() * (spread + 1));
      for (let f = 0; f < flips; f++) {
        const bit = Math.floor(random() * bits);
        halves[at + (bit >>> 5)]! ^= 1 << (bit & 31);
      }
    }
  }
  return new BigUint64Array(halves.buffer);
}

function randomFingerprints(n: number, seed: number): BigUint64Array {
  const random = rng(seed);
  const halves = new Uint32Array(2 * n);
  for (let i = 0; i < halves.length; i++) halves[i] = (random() * 2 ** 32) >>> 0;
  return new BigUint64Array(halves.buffer);
}

describe('planJoinFor', () => {
  it("keeps the model's plan on uniformly random fingerprints", () => {
    for (const [n, k] of [
      [100_000, 3],
      [100_000, 12],
      [1_000_000, 3],
    ] as const) {
      const fps = randomFingerprints(n, n + k);
      const model = planJoin(n, k, 64);
      const chosen = planJoinFor(fps, n, k, 64);
      expect([chosen.blocks.length, chosen.sortBits], `n ${n} k ${k}`).toEqual([model.blocks.length, model.sortBits]);
    }
  });

  it('picks another plan on clustered fingerprints, and its pairs equal brute force', () => {
    // 600 groups of 20 near-copies (up to 8 bits apart) at k = 12: the model's 91 tables meet each pair many times.
    const fps = clustered(600, 20, 8, 64, 5);
    const n = fps.length;
    const model = planJoin(n, 12, 64);
    const chosen = planJoinFor(fps, n, 12, 64);
    expect([chosen.blocks.length, chosen.tables.length]).not.toEqual([model.blocks.length, model.tables.length]);
    const expected = bruteForce(fps, 12, 64);
    expect(expected.length).toBeGreaterThan(100_000);
    expect(asStrings(findNearDuplicates(fps, { k: 12 }))).toEqual(expected);
    expect(asStrings(findWithPlan(fps, model))).toEqual(expected);
  });

  for (const [bits, k, spread] of [
    [64, 3, 3],
    [64, 7, 9],
    [128, 6, 8],
    [128, 21, 24],
  ] as const) {
    it(`findNearDuplicates equals brute force on clustered fingerprints (${bits} bits, k = ${k}, boundary included)`, () => {
      const fps = clustered(500, 10, spread, bits, bits + k);
      const expected = bruteForce(fps, k, bits);
      expect(expected.some((s) => s.endsWith(`,${k}`))).toBe(true);
      expect(asStrings(findNearDuplicates(fps, { k, bits }))).toEqual(expected);
      const chosen = planJoinFor(fps, fps.length / (bits / 64), k, bits);
      expect(asStrings(findWithPlan(fps, chosen))).toEqual(expected);
    });
  }
});

describe('joinSurelyExceeds', () => {
  // 64 groups of 64 copies at most 3 bits from their centre: every pair inside a group is within k = 6, so the
  // join has at least 64 · C(64, 2) = 129,024 pairs (counted by brute force below).
  const fps = clustered(64, 64, 3, 64, 39);
  const n = fps.length;
  const pairs = bruteForce(fps, 6, 64).length;

  it('says a join is over a budget only far past it, and joinIfSmall then gives up (same answer as trying)', async () => {
    expect(pairs).toBeGreaterThanOrEqual(129_024);
    expect(joinSurelyExceeds(fps, n, 6, 64, Math.floor(pairs / 10))).toBe(true);
    // Within the margin the sample is not trusted: the join is tried, and counted.
    expect(joinSurelyExceeds(fps, n, 6, 64, Math.floor(pairs / 2))).toBe(false);
    expect(joinSurelyExceeds(fps, n, 6, 64, pairs)).toBe(false);
    const plan = planJoinFor(fps, n, 6, 64);
    expect(joinIfSmallHere(fps, plan, Math.floor(pairs / 10))).toBeNull();
    expect(await joinIfSmall(fps, plan, 2, Math.floor(pairs / 10))).toBeNull();
    expect(joinIfSmallHere(fps, plan, pairs - 1)).toBeNull();
    expect(asStrings(joinIfSmallHere(fps, plan, pairs)!)).toEqual(bruteForce(fps, 6, 64));
  });

  it('never answers from a sample of too few fingerprints or too few pairs', () => {
    // 2,047 fingerprints, all within k of each other: too few to sample.
    expect(joinSurelyExceeds(clustered(1, 2047, 2, 64, 40), 2047, 6, 64, 0)).toBe(false);
    // Random fingerprints at k = 3: no pair in the sample, whatever the budget.
    expect(joinSurelyExceeds(randomFingerprints(100_000, 41), 100_000, 3, 64, 0)).toBe(false);
    // 128 bits: the sample reads both words.
    const wide = clustered(64, 64, 3, 128, 42);
    expect(joinSurelyExceeds(wide, n, 6, 128, 1000)).toBe(true);
    expect(joinSurelyExceeds(wide, n, 6, 128, 10 ** 9)).toBe(false);
  });
});
