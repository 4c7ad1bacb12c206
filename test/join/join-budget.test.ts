// dedup's budgeted join (joinIfSmall): the whole join, sorted, when it has at most `budget` pairs, else null, with
// the same answer on one thread and on two (each worker stops past the budget). Pairs against the plain join.
import { describe, expect, it } from 'vitest';
import { findNearDuplicates, joinIfSmall, joinIfSmallHere } from '../../src/join/find-near-duplicates.js';
import { planJoin } from '../../src/join/join-plan.js';
import { asStrings } from './join-reference.js';
import { rng } from '../reference.js';

/** n random 64-bit fingerprints, every tenth a copy of an earlier one with 0-3 bits flipped. */
function planted(n: number, seed: number): BigUint64Array {
  const next = rng(seed);
  const fps = new BigUint64Array(n);
  const u32 = new Uint32Array(fps.buffer);
  for (let i = 0; i < u32.length; i++) u32[i] = Math.floor(next() * 2 ** 32);
  for (let i = 10; i < n; i += 10) {
    let fp = fps[Math.floor(next() * i)]!;
    for (let f = Math.floor(next() * 4); f > 0; f--) fp ^= 1n << BigInt(Math.floor(next() * 64));
    fps[i] = fp;
  }
  return fps;
}

describe('joinIfSmall', () => {
  it('gives the whole join within the budget and null past it, on one thread and on two', async () => {
    const n = 1_000_000;
    const fps = planted(n, 38);
    const plan = planJoin(n, 3, 64);
    expect(plan.cost).toBeGreaterThan(20e6); // so threads: 2 really runs on workers
    const want = findNearDuplicates(fps, { k: 3 });
    const pairs = want.a.length;
    expect(pairs).toBeGreaterThan(50_000);
    for (const budget of [pairs, pairs + 1, 10 * pairs]) {
      expect(asStrings(joinIfSmallHere(fps, plan, budget)!), `budget ${budget}`).toEqual(asStrings(want));
      expect(asStrings((await joinIfSmall(fps, plan, 2, budget))!), `budget ${budget}, 2 threads`).toEqual(
        asStrings(want),
      );
    }
    for (const budget of [pairs - 1, 1000, 0]) {
      expect(joinIfSmallHere(fps, plan, budget), `budget ${budget}`).toBeNull();
      expect(await joinIfSmall(fps, plan, 2, budget), `budget ${budget}, 2 threads`).toBeNull();
    }
    // A failed budget leaves the join usable.
    expect(findNearDuplicates(fps, { k: 3 }).a.length).toBe(pairs);
  });
});
