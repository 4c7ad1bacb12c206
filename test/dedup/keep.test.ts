// Which document each cluster keeps (`keep`): duplicatesOf against a plain reference that sorts each cluster's
// members, dedup() and dedupStream agreeing on real clusters, and bad values refused before any work.
import { describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { duplicatesOf, type KeepRule } from '../../src/dedup/keep.js';
import { dedupStream } from '../../src/dedup/stream.js';
import { rng } from '../reference.js';

/** The plain rule: per cluster, members sorted by (length, index) in the asked direction; the first is kept. */
function referenceDuplicates(clusterOf: Uint32Array, keep: KeepRule, lengths: readonly number[]): number[] {
  const members = new Map<number, number[]>();
  clusterOf.forEach((rep, i) => members.set(rep, [...(members.get(rep) ?? []), i]));
  const out = new Array<number>(clusterOf.length).fill(-1);
  for (const list of members.values()) {
    const ordered = [...list].sort((x, y) => {
      const by = keep === 'first' ? 0 : keep === 'longest' ? lengths[y]! - lengths[x]! : lengths[x]! - lengths[y]!;
      return by || x - y;
    });
    for (const i of list) out[i] = i === ordered[0] ? -1 : ordered[0]!;
  }
  return out;
}

/** Random clusters as dedup gives them: each document's representative is its cluster's lowest index. */
function randomClusters(seed: number, n: number): { clusterOf: Uint32Array; lengths: number[] } {
  const next = rng(seed);
  const clusterOf = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const joinEarlier = i > 0 && next() < 0.6;
    clusterOf[i] = joinEarlier ? clusterOf[Math.floor(next() * i)]! : i;
  }
  // Few distinct lengths, so that ties are common.
  const lengths = Array.from({ length: n }, () => Math.floor(next() * 6));
  return { clusterOf, lengths };
}

describe('keep', () => {
  for (const keep of ['first', 'longest', 'shortest'] as const) {
    it(`duplicatesOf matches the reference (${keep}, seeded clusters with ties)`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const { clusterOf, lengths } = randomClusters(seed, 1 + seed * 37);
        const got = Array.from(duplicatesOf(clusterOf, keep, (i) => lengths[i]!));
        expect(got, `seed ${seed}`).toEqual(referenceDuplicates(clusterOf, keep, lengths));
      }
    });
  }

  it('keeps every document of an empty corpus and of clusters of one', () => {
    expect(Array.from(duplicatesOf(new Uint32Array(0), 'longest', () => 0))).toEqual([]);
    expect(Array.from(duplicatesOf(Uint32Array.from([0, 1, 2]), 'shortest', () => 1))).toEqual([-1, -1, -1]);
  });

  it('dedup() and dedupStream keep the same documents, by string length or bytes', async () => {
    const base = 'the quick brown fox jumps over the lazy dog near the river bank every single morning';
    const texts = [
      `${base} today`,
      'something else entirely, with its own words and nothing in common',
      `${base} today and tomorrow too`,
      base,
      `${base} today`, // an exact copy of the first
    ];
    for (const keep of ['first', 'longest', 'shortest'] as const) {
      const r = dedup(texts, { keep });
      expect(r.clusterOf[2], 'one cluster').toBe(0);
      expect(Array.from(r.duplicateOf), keep).toEqual(
        referenceDuplicates(
          r.clusterOf,
          keep,
          texts.map((t) => t.length),
        ),
      );
      const bytes = texts.map((t) => new TextEncoder().encode(t));
      const s = await dedupStream(
        bytes.map((text) => ({ text })),
        { keep, reread: (loc) => Array.from(loc.index, (i) => bytes[i]!) },
      );
      expect(Array.from(s.duplicateOf), `${keep}, streamed`).toEqual(Array.from(r.duplicateOf));
    }
    expect(Array.from(dedup(texts, { keep: 'longest' }).duplicateOf)).toEqual([2, -1, -1, 2, 2]);
    expect(Array.from(dedup(texts, { keep: 'shortest' }).duplicateOf)).toEqual([3, -1, 3, -1, 3]);
  });

  it("threshold is the command line's name for verify.threshold", () => {
    const texts = ['one two three four five six seven eight', 'one two three four five six seven nine', 'x'];
    const strict = dedup(texts, { threshold: 0.99 });
    expect(Array.from(strict.duplicateOf)).toEqual(
      Array.from(dedup(texts, { verify: { threshold: 0.99 } }).duplicateOf),
    );
    expect(strict.verify).toEqual({ threshold: 0.99, width: 3 });
    expect(() => dedup(texts, { threshold: 0.5, verify: { threshold: 0.7 } })).toThrow(/disagree/);
    expect(() => dedup(texts, { threshold: 0.5, verify: false })).toThrow(/cannot go with verify: false/);
    expect(() => dedup(texts, { threshold: 2 })).toThrow(RangeError);
  });

  it('refuses an unknown rule with the value in the message, before any work', async () => {
    expect(() => dedup(['a'], { keep: 'last' as KeepRule })).toThrow(RangeError);
    expect(() => dedup(['a'], { keep: 'last' as KeepRule })).toThrow(/"last"/);
    expect(() => dedup(['a'], { keep: 1 as unknown as KeepRule })).toThrow(TypeError);
    await expect(dedupStream([{ text: 'a' }], { keep: 'newest' as KeepRule, reread: () => [] })).rejects.toThrow(
      /keep must be .*"newest"/,
    );
    // The library still works after a refused call.
    expect(Array.from(dedup(['a b c', 'a b c'], { keep: 'longest' }).duplicateOf)).toEqual([-1, 0]);
  });
});
