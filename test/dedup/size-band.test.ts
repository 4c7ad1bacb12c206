// dedup's size band (src/dedup/size-band.ts) leaves out of the join only pairs the verifier must reject: the band
// is checked against a plain enumeration of every pair of groups, and dedup with it against the plain pipeline
// (the self-join of all pairs, findNearDuplicates, then verifyPairs) on corpora whose set sizes spread widely,
// with pairs whose Jaccard is exactly the threshold and more distinct fingerprints than two of the join's tiles.
import { describe, expect, it } from 'vitest';
import { dedup, findNearDuplicates, simhashMany, verifyPairs } from '../../src/index.js';
import { rowsOf, type Collapsed } from '../../src/dedup/dedup-groups.js';
import { sizeBand } from '../../src/dedup/size-band.js';
import { rng } from '../reference.js';
import { asStrings, unionFind } from '../join/join-reference.js';
import { shingleSets } from '../../src/dedup/shingle-sets.js';

/** The verifier's size rule from first principles: could sets of these sizes have Jaccard ≥ t? */
function couldPass(x: number, y: number, t: number): boolean {
  if (x === 0 || y === 0) return x === 0 && y === 0; // both empty: decided by the trimmed texts
  return Math.min(x, y) / Math.max(x, y) >= t;
}

describe('sizeBand', () => {
  it('keeps every pair of groups that two of their members could pass with, and leaves others out (seeded)', () => {
    const next = rng(0x5b);
    for (let round = 0; round < 60; round++) {
      const docs = 1 + Math.floor(next() * 120);
      const t = [0.6, 0.5, 0.8, 1, 0.01][round % 5]!;
      // Sizes in a few clumps (equal sizes, exact ratios such as 3:5 at t = 0.6) and a long tail, zeros included.
      const sizes = Array.from({ length: docs }, () => {
        const r = next();
        return r < 0.1 ? 0 : r < 0.4 ? [3, 5, 6, 10][Math.floor(next() * 4)]! : Math.floor(next() ** 3 * 2000);
      });
      const groupCount = 1 + Math.floor(next() * docs);
      const groupOf = Uint32Array.from({ length: docs }, (_, d) =>
        d < groupCount ? d : Math.floor(next() * groupCount),
      );
      const c = { fpGroups: rowsOf(groupOf, groupCount), joined: Uint32Array.from(sizes, (_, d) => d) } as Collapsed;
      const setOf = Int32Array.from(sizes, (_, d) => d);
      const band = sizeBand(c, setOf, Uint32Array.from(sizes), t)!;
      const members = (g: number) => sizes.filter((_, d) => groupOf[d] === g);
      // Every group is in the band or spread (compared with all): the spread ones are those whose sizes spread.
      const spread = new Set(band.spread);
      expect([...band.order, ...band.spread].sort((x, y) => x - y)).toEqual(
        Array.from({ length: groupCount }, (_, g) => g),
      );
      for (let g = 0; g < groupCount; g++) {
        const m = members(g);
        expect(spread.has(g), `group ${g}: ${m}`).toBe(Math.max(...m) > 1.1 * Math.min(...m));
      }
      const position = new Uint32Array(groupCount);
      band.order.forEach((g, p) => {
        position[g] = p;
      });
      const inBand = band.order.length;
      let pairs = 0;
      for (let p = 0; p < inBand; p++) {
        expect(band.ends[p]).toBeGreaterThanOrEqual(p + 1);
        expect(band.ends[p]).toBeLessThanOrEqual(inBand);
        if (p > 0) expect(band.ends[p]).toBeGreaterThanOrEqual(band.ends[p - 1]!);
        pairs += band.ends[p]! - p - 1;
      }
      const s = spread.size;
      expect(band.pairs).toBe(pairs + s * (groupCount - 1) - (s * (s - 1)) / 2);
      for (let g = 0; g < groupCount; g++) {
        for (let h = g + 1; h < groupCount; h++) {
          const could = members(g).some((x) => members(h).some((y) => couldPass(x, y, t)));
          if (!could || spread.has(g) || spread.has(h)) continue;
          const [p, r] = [position[g]!, position[h]!].sort((x, y) => x - y) as [number, number];
          expect(r, `round ${round}: groups ${g} and ${h} (sizes ${members(g)} / ${members(h)}, t ${t})`).toBeLessThan(
            band.ends[p]!,
          );
        }
      }
    }
    // Sizes 1..1000 at t = 0.6, one document each: the band leaves most pairs out.
    const sizes = Uint32Array.from({ length: 1000 }, (_, d) => d + 1);
    const iota = Uint32Array.from(sizes, (_, d) => d);
    const c = { fpGroups: rowsOf(iota, 1000), joined: iota } as Collapsed;
    const band = sizeBand(c, Int32Array.from(iota), sizes, 0.6)!;
    expect(band.pairs).toBeLessThan((1000 * 999) / 2 / 2);
    // A document without a set: no band.
    expect(
      sizeBand(
        c,
        Int32Array.from(iota, (d) => (d === 7 ? -1 : d)),
        sizes,
        0.6,
      ),
    ).toBeNull();
  });
});

/** Words of a large random vocabulary: shingles of different documents (almost) never meet by chance. */
function word(next: () => number): string {
  return `w${Math.floor(next() * 1e9).toString(36)}`;
}

/**
 * Bases of 3 to ~600 words (sizes spread over two orders of magnitude), each with variants: a few words replaced,
 * and word prefixes, one of them cut so that its Jaccard with the base is exactly `t` (m - 2 of n - 2 shingles).
 */
function spreadCorpus(seed: number, count: number, t: number): { texts: string[]; atThreshold: Set<string> } {
  const next = rng(seed);
  const out: string[] = [];
  // Base and prefix texts (joined by a newline) whose Jaccard is exactly t.
  const atThreshold = new Set<string>();
  while (out.length < count) {
    const n = 3 + Math.floor(Math.exp(next() * Math.log(200)) * 3);
    const words = Array.from({ length: n }, () => word(next));
    out.push(words.join(' '));
    const edited = words.map((w) => (next() < 0.05 ? word(next) : w));
    out.push(edited.join(' '));
    // (m - 2) / (n - 2) = t exactly when t (n - 2) is a whole number; otherwise just above and just below it.
    const exact = t * (n - 2);
    for (const m of new Set([Math.ceil(exact) + 2, Math.floor(exact) + 2, Math.floor(exact) + 1])) {
      if (m < 3 || m >= n) continue;
      const prefix = words.slice(0, m).join(' ');
      out.push(prefix);
      if ((m - 2) / (n - 2) === t) atThreshold.add(`${words.join(' ')}\n${prefix}`);
    }
  }
  // Shuffled: sizes and families in no order.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return { texts: out.slice(0, count), atThreshold };
}

/** The pairs, in order, that join two documents not yet connected by those before them (a plain union-find). */
function spanning(n: number, pairs: string[]): string[] {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x]!)));
  return pairs.filter((p) => {
    const [a, b] = p.split(',').map(Number) as [number, number];
    const [ra, rb] = [find(a), find(b)];
    if (ra === rb) return false;
    parent[Math.max(ra, rb)] = Math.min(ra, rb);
    return true;
  });
}

/**
 * Short texts T whose doubled text "T T" has T's fingerprint: its shingle multiset is T's twice plus the two that
 * cross the middle, so no counter changes sign unless T's is 0 there. Their sets differ by those two shingles: a
 * group of identical fingerprints whose sizes spread (10 and 12).
 */
function doubledTwins(seed: number, count: number): string[][] {
  const next = rng(seed);
  const out: string[][] = [];
  for (let tries = 0; out.length < count && tries < 20_000; tries++) {
    const t = Array.from({ length: 12 }, () => word(next)).join(' ');
    const twice = `${t} ${t}`;
    const [x, y] = simhashMany([t, twice]);
    if (x === y) out.push([t, twice]);
  }
  return out;
}

describe('dedup with the size band', () => {
  for (const [seed, count, k, threshold] of [
    [1, 2600, 12, 0.6],
    [2, 2600, 20, 0.5],
    [3, 700, 40, 0.6],
    [4, 700, 30, 0.8],
  ] as const) {
    it(`gives the plain pipeline's pairs and clusters (${count} documents, k ${k}, threshold ${threshold})`, () => {
      const { texts, atThreshold } = spreadCorpus(seed, count, threshold);
      const candidates = findNearDuplicates(simhashMany(texts), { k });
      const want = asStrings(verifyPairs(texts, candidates, { threshold }));
      const all = dedup(texts, { k, verify: { threshold }, pairs: 'all' });
      expect(all.pairs.a.length).toBe(want.length);
      expect(asStrings(all.pairs)).toEqual(want);
      // Fewer candidates than the plain join: the band left out pairs that could not pass.
      expect(all.candidates).toBeLessThan(candidates.a.length);
      // The default lists a spanning forest of the same clusters: each pair verified, or an exact copy.
      const explain = dedup(texts, { k, verify: { threshold } });
      const wanted = new Set(want);
      const listed = asStrings(explain.pairs);
      for (const [i, p] of listed.entries()) {
        const copy = texts[explain.pairs.a[i]!] === texts[explain.pairs.b[i]!];
        expect(wanted.has(p) || copy, p).toBe(true);
      }
      expect(spanning(texts.length, listed)).toEqual(listed);
      expect(listed.length).toBe(texts.length - all.clusterCount);
      expect(Array.from(explain.clusterOf)).toEqual(Array.from(all.clusterOf));
      expect(Array.from(all.clusterOf)).toEqual(unionFind(texts.length, want));
      expect(want.length).toBeGreaterThan(count / 10);
      // Some kept pairs sit exactly at the threshold (prefixes cut to t (n - 2) shingles), once k reaches them.
      const exact = Array.from(all.pairs.a, (a, i) => [texts[a]!, texts[all.pairs.b[i]!]!]).filter(
        ([x, y]) => atThreshold.has(`${x}\n${y}`) || atThreshold.has(`${y}\n${x}`),
      );
      if (k >= 20) expect(exact.length).toBeGreaterThan(0);
    });
  }

  it('a group of identical fingerprints whose sizes spread is compared with every group', () => {
    const twins = doubledTwins(7, 6);
    expect(twins.length).toBe(6);
    const sizes = shingleSets(twins.flat(), 3).map((set) => set.length);
    expect(sizes.slice(0, 2)).toEqual([10, 12]);
    // Each twin pair with its near copies (a word replaced: kept or not by the threshold) among a corpus of spread
    // sizes; the doubled texts pass with T (10 of 12 shingles) and with T's copies only by their own sizes.
    const next = rng(8);
    const texts = [...spreadCorpus(9, 1500, 0.6).texts];
    for (const [t, twice] of twins) {
      const words = t!.split(' ');
      const copy = words.map((w, i) => (i === 5 ? word(next) : w)).join(' ');
      for (const x of [t!, twice!, copy, `${copy} ${copy}`]) texts.splice(Math.floor(next() * texts.length), 0, x);
    }
    for (const [k, threshold] of [
      [12, 0.6],
      [24, 0.3],
    ] as const) {
      const want = asStrings(verifyPairs(texts, findNearDuplicates(simhashMany(texts), { k }), { threshold }));
      const all = dedup(texts, { k, verify: { threshold }, pairs: 'all' });
      expect(asStrings(all.pairs), `k ${k}`).toEqual(want);
      expect(Array.from(all.clusterOf)).toEqual(unionFind(texts.length, want));
      for (const [t, twice] of twins)
        expect(all.clusterOf[texts.indexOf(t!)], 'T with T T').toBe(all.clusterOf[texts.indexOf(twice!)]);
    }
  });
});
