// The chunked join walked on a worker beside the verifier (join-beside.ts) against the walk on this thread
// (joinAndVerify): the same candidates, checks and pairs on seeded near-duplicate groups, in chunks small enough that
// the walk runs ahead of verification; and a verification that fails half-way stops the walk, rejects with its own
// error, and leaves the pool usable for the next join.
import { afterEach, describe, expect, it } from 'vitest';
import { collapse } from '../../src/dedup/dedup-groups.js';
import { firstOfEqual, contentHashes } from '../../src/dedup/exact-copies.js';
import { joinAndVerifyBeside, walksBeside } from '../../src/dedup/join-beside.js';
import { type SetSource, textSource } from '../../src/dedup/pair-checks.js';
import { joinAndVerify, walkChunk } from '../../src/dedup/verify-candidates.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { planJoinFor } from '../../src/join/join-estimate.js';
import { rng } from '../reference.js';

/** m edited copies of each of `bases` texts (a word or two changed), copies of a few texts in between. */
function groups(seed: number, bases: number, m: number): string[] {
  const next = rng(seed);
  const int = (n: number) => Math.floor(next() * n);
  const word = () => `w${int(3000).toString(36)}`;
  const docs: string[] = [];
  for (let g = 0; g < bases; g++) {
    const words = Array.from({ length: 20 + int(60) }, word);
    for (let c = 0; c < m; c++) {
      const copy = words.slice();
      for (let e = 1 + int(2); e > 0; e--) copy[int(copy.length)] = word();
      docs.push(copy.join(' '));
    }
  }
  for (let i = docs.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

function stage(texts: string[]) {
  const fps = simhashMany(texts);
  const copyOf = firstOfEqual(contentHashes(texts), 2);
  const g = collapse(fps, new Float64Array(texts.length).fill(1), copyOf, 1, null);
  const plan = planJoinFor(g.distinctFps, g.distinctFps.length, 12, 64);
  return { g, plan };
}

const chunk = walkChunk.pairs;
afterEach(() => {
  walkChunk.pairs = chunk;
});

describe('the join walked beside the verifier', () => {
  const texts = groups(7, 40, 25);
  const options = (source: SetSource) => ({ verify: { threshold: 0.6, width: 3 }, source, windowBytes: 1 << 16 });

  it("gives the walk on this thread's candidates, checks and pairs, a few pairs per chunk", async () => {
    walkChunk.pairs = 13;
    const { g, plan } = stage(texts);
    const here = joinAndVerify(texts.length, g, plan, options(textSource(texts, 3)));
    const before = walksBeside.count;
    const beside = await joinAndVerifyBeside(texts.length, g, plan, options(textSource(texts, 3)), 2);
    expect(walksBeside.count).toBe(before + 1);
    expect(here.candidates).toBeGreaterThan(50 * 13);
    expect(beside!.candidates).toBe(here.candidates);
    expect(beside!.checks).toBe(here.checks);
    expect(Array.from(beside!.verified.a)).toEqual(Array.from(here.verified.a));
    expect(Array.from(beside!.verified.b)).toEqual(Array.from(here.verified.b));
    // One thread asked for: the caller walks here (null).
    expect(await joinAndVerifyBeside(texts.length, g, plan, options(textSource(texts, 3)), 1)).toBeNull();
  });

  it('a verification that fails half-way rejects with its error, stops the walk, and the next join works', async () => {
    walkChunk.pairs = 13;
    const { g, plan } = stage(texts);
    const good = textSource(texts, 3);
    let loads = 0;
    const failing: SetSource = {
      ...good,
      load: (rt, docs) => {
        if (++loads === 5) throw new Error('disk gone half-way');
        return good.load(rt, docs);
      },
    };
    await expect(joinAndVerifyBeside(texts.length, g, plan, options(failing), 2)).rejects.toThrow('disk gone half-way');
    expect(loads).toBe(5);
    const again = await joinAndVerifyBeside(texts.length, g, plan, options(good), 2);
    const here = joinAndVerify(texts.length, g, plan, options(good));
    expect(again!.checks).toBe(here.checks);
    expect(Array.from(again!.verified.a)).toEqual(Array.from(here.verified.a));
  });
});
