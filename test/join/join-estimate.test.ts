import { describe, expect, it } from 'vitest';
import { findNearDuplicates } from '../../src/join/find-near-duplicates.js';
import { planJoinFor } from '../../src/join/join-estimate.js';
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
