// The chunked join walked on workers beside the verifier (join-beside.ts, two walks over shares of the tables)
// against the walks taking turns on this thread (joinAndVerify): the same candidates, checks and pairs on seeded
// near-duplicate groups, in chunks small enough that the walks run ahead of verification; joins beside at once
// (each walk waits for the other's chunks to be verified) all finish; and a verification that fails half-way stops
// the walks, rejects with its own error, and leaves the pool usable for the next join.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collapse } from '../../src/dedup/dedup-groups.js';
import { firstOfEqual, contentHashes } from '../../src/dedup/exact-copies.js';
import { joinAndVerifyBeside, walkBesideFrom, walksBeside } from '../../src/dedup/join-beside.js';
import { type SetSource, textSource } from '../../src/dedup/pair-checks.js';
import { joinAndVerify, walkChunk, walkShares } from '../../src/dedup/verify-candidates.js';
import {
  FINGERPRINT_TASK,
  type FingerprintTask,
  createSimHasher,
  simhashMany,
} from '../../src/fingerprint/fingerprint.js';
import type { HashResult } from '../../src/dedup/stream-tasks.js';
import { sharedPool } from '../../src/runtime/pool.js';
import { packTexts } from '../../src/runtime/pool-texts.js';
import type { WithSpare } from '../../src/runtime/spare-buffers.js';
import { planJoinFor } from '../../src/join/join-estimate.js';
import { planWithBlocks } from '../../src/join/join-plan.js';
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

/** The texts grouped; the join planned by the model (at this size: compare all, one table) or with 14 blocks. */
function stage(texts: string[], blocks?: number) {
  const fps = simhashMany(texts);
  const copyOf = firstOfEqual(contentHashes(texts), 2);
  const g = collapse(fps, new Float64Array(texts.length).fill(1), copyOf, 1, null);
  const plan = blocks ? planWithBlocks(12, 64, blocks) : planJoinFor(g.distinctFps, g.distinctFps.length, 12, 64);
  return { g, plan };
}

const chunk = walkChunk.pairs;
const besideFrom = walkBesideFrom.cost;
// These corpora's walks are planned far below what pays for a worker: the path is taken all the same.
beforeEach(() => {
  walkBesideFrom.cost = 0;
});
afterEach(() => {
  walkChunk.pairs = chunk;
  walkBesideFrom.cost = besideFrom;
});

describe('the join walked beside the verifier', () => {
  const texts = groups(7, 40, 25);
  const options = (source: SetSource) => ({ verify: { threshold: 0.6, width: 3 }, source, windowBytes: 1 << 16 });

  for (const blocks of [undefined, 14]) {
    it(`gives the walks on this thread's candidates, checks and pairs, a few pairs per chunk (${blocks ? `${blocks} blocks: two walks` : 'one table: one walk'})`, async () => {
      walkChunk.pairs = 13;
      const { g, plan } = stage(texts, blocks);
      expect(walkShares(plan)).toHaveLength(blocks ? 2 : 1);
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
  }

  it('a walk planned below walkBesideFrom stays on this thread (null), as one asked for one thread does', async () => {
    walkBesideFrom.cost = besideFrom;
    const { g, plan } = stage(texts, 14);
    expect(plan.cost).toBeLessThan(besideFrom);
    const before = walksBeside.count;
    expect(await joinAndVerifyBeside(texts.length, g, plan, options(textSource(texts, 3)), 2)).toBeNull();
    expect(walksBeside.count).toBe(before);
    walkBesideFrom.cost = plan.cost;
    expect(await joinAndVerifyBeside(texts.length, g, plan, options(textSource(texts, 3)), 2)).not.toBeNull();
    expect(walksBeside.count).toBe(before + 1);
  });

  it('joins beside at once, with a one-thread task between them, all finish with the results of this thread', async () => {
    walkChunk.pairs = 13;
    const { g, plan } = stage(texts, 14);
    expect(walkShares(plan)).toHaveLength(2);
    const here = joinAndVerify(texts.length, g, plan, options(textSource(texts, 3)));
    const beside = () => joinAndVerifyBeside(texts.length, g, plan, options(textSource(texts, 3)), 2);
    // The task with threads 1 lowers the pool's limit to one worker while the joins wait for theirs: walks given
    // workers one at a time would then hold the one worker and wait forever for the walk that cannot start.
    const hashed = () => {
      const t: FingerprintTask = { texts: packTexts(texts.slice(0, 40)), plan: createSimHasher().options };
      return sharedPool().run<WithSpare<HashResult>>(FINGERPRINT_TASK, t, 1);
    };
    const [x, y, h] = await Promise.all([beside(), beside(), hashed()]);
    expect(Array.from(h.value.fingerprints)).toEqual(Array.from(simhashMany(texts.slice(0, 40))));
    for (const r of [x!, y!]) {
      expect(r.checks).toBe(here.checks);
      expect(Array.from(r.verified.a)).toEqual(Array.from(here.verified.a));
      expect(Array.from(r.verified.b)).toEqual(Array.from(here.verified.b));
    }
  });

  it('verifies the distinct texts of one fingerprint while the walks start: the results of this thread', async () => {
    walkChunk.pairs = 13;
    // Each text again in capitals and with a comma: other texts with the same words, so the same fingerprint.
    const variants = texts
      .slice(0, 300)
      .flatMap((t, i) => (i % 3 === 0 ? [t, t.toUpperCase(), t.replace(' ', ', ')] : [t]));
    for (const blocks of [undefined, 14]) {
      const { g, plan } = stage(variants, blocks);
      const { start } = g.fpGroups;
      let inside = 0; // pairs inside groups of one fingerprint
      for (let q = 0; q + 1 < start.length; q++)
        inside += ((start[q + 1]! - start[q]!) * (start[q + 1]! - start[q]! - 1)) / 2;
      expect(inside).toBeGreaterThan(100);
      const here = joinAndVerify(variants.length, g, plan, options(textSource(variants, 3)));
      const beside = await joinAndVerifyBeside(variants.length, g, plan, options(textSource(variants, 3)), 2);
      expect(beside!.candidates).toBe(here.candidates);
      expect(beside!.checks).toBe(here.checks);
      expect(Array.from(beside!.verified.a)).toEqual(Array.from(here.verified.a));
      expect(Array.from(beside!.verified.b)).toEqual(Array.from(here.verified.b));
      // Failing in those first checks, before any chunk: the walks stop, and the next join works.
      const good = textSource(variants, 3);
      const failing: SetSource = {
        ...good,
        load: () => {
          throw new Error('disk gone at once');
        },
      };
      await expect(joinAndVerifyBeside(variants.length, g, plan, options(failing), 2)).rejects.toThrow('disk gone');
      const again = await joinAndVerifyBeside(variants.length, g, plan, options(good), 2);
      expect(again!.checks).toBe(here.checks);
    }
  });

  it('a verification that fails half-way rejects with its error, stops the walk, and the next join works', async () => {
    walkChunk.pairs = 13;
    const { g, plan } = stage(texts, 14);
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
