import { beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { dedup, dropFeaturelessPairs, findNearDuplicates, simhashMany, verifyPairs } from '../../src/index.js';
import { jaccardFlags, keepFlagged } from '../../src/dedup/verify-pairs.js';
import {
  PASS_CHUNK_BYTES,
  VERIFY_WINDOW_BYTES,
  fingerprintWithSets,
  fingerprintsShareShingles,
  type VerifyKernels,
  shingleSets,
  verifyRegions,
} from '../../src/dedup/shingle-sets.js';
import fc from 'fast-check';
import { PairChecks, type SetSource, pairFlags, textSource } from '../../src/dedup/pair-checks.js';
import { forestJoin, forestRoot } from '../../src/dedup/forest.js';
import { createSimHasher } from '../../src/fingerprint/fingerprint.js';
import { wasm } from '../../src/runtime/wasm.js';
import { spanningPairs } from '../../src/dedup/dedup-groups.js';
import { loadReference, randomDocument, rng, wordList } from '../reference.js';
import { wordsOf } from '../../src/dedup/shingle-jaccard.js';
import { families, refCounts, refKeep, refSet, refVerifierSet } from './jaccard-reference.js';

beforeAll(loadReference);

function allPairs(n: number): { a: Uint32Array; b: Uint32Array } {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      a.push(i);
      b.push(j);
    }
  return { a: Uint32Array.from(a), b: Uint32Array.from(b) };
}

describe('verification in WebAssembly against the plain reference', () => {
  it("the kernel's words (shingle-jaccard.ts wordsOf) are the reference's words", () => {
    const next = rng(51);
    const texts = Array.from({ length: 400 }, () => randomDocument(next, 20));
    const got = wordsOf(texts);
    texts.forEach((t, i) => {
      expect(got[i], JSON.stringify(t)).toEqual(wordList(t, true).map((w) => w.join('')));
    });
  });

  it('shingle sets are the reference shingle hashes, sorted and distinct, for widths 1-5 and 64', () => {
    const texts = families(11, 120, 14);
    texts.push('', '©', '%s ???', 'one', 'one two', '中文');
    // Texts encoded a chunk at a time: the default, one document per chunk, and chunks that split the batch.
    for (const chunk of [PASS_CHUNK_BYTES, 1, 5000]) {
      for (const width of [1, 2, 3, 4, 5, 64]) {
        const sets = shingleSets(texts, width, VERIFY_WINDOW_BYTES, chunk);
        texts.forEach((t, i) => {
          const expected = [...refSet(t, width)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
          expect([...sets[i]!], `width ${width}, chunks of ${chunk}: ${JSON.stringify(t)}`).toEqual(expected);
        });
      }
    }
  });

  it('dense texts (a distinct shingle per 3 bytes) outgrow the first set memory: sets are still exact', () => {
    const next = rng(61);
    // Han characters are words of their own: 1000 words in 3000 bytes, nearly all shingles distinct.
    const texts = Array.from({ length: 40 }, () =>
      String.fromCodePoint(...Array.from({ length: 1000 }, () => 0x4e00 + Math.floor(next() * 20000))),
    );
    for (const [width, chunk] of [
      [1, PASS_CHUNK_BYTES],
      [3, PASS_CHUNK_BYTES],
      [3, 3500], // a few documents per chunk: the memory grows between chunks and within one
    ] as const) {
      const sets = shingleSets(texts, width, VERIFY_WINDOW_BYTES, chunk);
      texts.forEach((t, i) => {
        const expected = [...refSet(t, width)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        expect([...sets[i]!], `width ${width}`).toEqual(expected);
      });
    }
    expect(shingleSets(texts, 3).reduce((n, s) => n + s.length, 0)).toBeGreaterThan(35000); // past the first 33,042
  });

  it('flags equal the reference rule on seeded multilingual pairs, widths 1-5, several thresholds', () => {
    for (const [seed, width] of [
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
    ] as const) {
      const texts = families(seed, 40, 10);
      const { a, b } = allPairs(texts.length);
      for (const t of [0.2, 0.5, 0.6, 0.9, 1]) {
        const flags = jaccardFlags(texts, a, b, { threshold: t, width });
        for (let p = 0; p < a.length; p++) {
          const [x, y] = [texts[a[p]!]!, texts[b[p]!]!];
          expect(flags[p], `w ${width} t ${t}: ${JSON.stringify(x)} | ${JSON.stringify(y)}`).toBe(
            refKeep(x, y, width, t) ? 1 : 0,
          );
        }
      }
    }
  });

  it('a pair whose Jaccard equals the threshold exactly is kept; just above it, dropped', () => {
    const texts = families(21, 60, 12);
    const { a, b } = allPairs(texts.length);
    let boundaries = 0;
    for (let p = 0; p < a.length; p++) {
      const [x, y] = [texts[a[p]!]!, texts[b[p]!]!];
      const [common, union] = refCounts(x, y);
      if (common === 0 || common === union) continue;
      const j = common / union;
      const one = { a: Uint32Array.of(a[p]!), b: Uint32Array.of(b[p]!) };
      expect(jaccardFlags(texts, one.a, one.b, { threshold: j, width: 3 })[0], `${x} | ${y}`).toBe(1);
      const above = j + Number.EPSILON * 2;
      expect(jaccardFlags(texts, one.a, one.b, { threshold: above, width: 3 })[0], `${x} | ${y}`).toBe(0);
      boundaries++;
    }
    expect(boundaries).toBeGreaterThan(20);
    // Hand-made: 3 of 5 shingles in common (J = 0.6 exactly, the default threshold).
    const s = ['a b c d e f', 'a b c d e x'];
    expect(refCounts(s[0]!, s[1]!)).toEqual([3, 5]);
    expect(verifyPairs(s, { a: Uint32Array.of(0), b: Uint32Array.of(1), distance: Uint8Array.of(1) }).a).toEqual(
      Uint32Array.of(0),
    );
  });

  it('sets past the histogram bound (32+, 256+ shingles, saturated buckets): the reference flags, boundaries too', () => {
    // The kernel rejects a pair when its sets' 512-bucket histograms bound the common shingles below the threshold's
    // need (SIMD build; sets of 32 shingles or more; none from a set with a bucket past 255). Distinct random words:
    // a base, variants with a share of words replaced, and word prefixes (J = (m - 2) / (n - 2) exactly). At
    // 150,000 words a bucket holds more than 255 hashes (checked below): the saturated path.
    const next = rng(0x415);
    const word = () => `w${Math.floor(next() * 1e9).toString(36)}`;
    const texts: string[] = [];
    for (const n of [34, 40, 120, 302, 600, 150_000]) {
      const words = Array.from({ length: n }, word);
      texts.push(words.join(' '));
      for (const share of [0.01, 0.1, 0.2, 0.3]) texts.push(words.map((w) => (next() < share ? word() : w)).join(' '));
      // Prefixes at J = 0.6 exactly (for n - 2 a multiple of 5), just above and just below.
      for (const m of [Math.round(0.6 * (n - 2)) + 2, Math.round(0.6 * (n - 2)) + 3, Math.round(0.6 * (n - 2)) + 1])
        texts.push(words.slice(0, m).join(' '));
    }
    const { a, b } = allPairs(texts.length);
    for (const t of [0.5, 0.6, 0.75, 0.85]) {
      const flags = jaccardFlags(texts, a, b, { threshold: t, width: 3 });
      let kept = 0;
      for (let p = 0; p < a.length; p++) {
        const want = refKeep(texts[a[p]!]!, texts[b[p]!]!, 3, t) ? 1 : 0;
        expect(flags[p], `t ${t}: documents ${a[p]} and ${b[p]}`).toBe(want);
        kept += want;
      }
      expect(kept).toBeGreaterThan(10);
    }
    // The largest base's set has a bucket (top 9 bits of its hashes) of more than 255: its histogram saturates.
    const largest = shingleSets([texts[40]!], 3)[0]!;
    const buckets = new Map<bigint, number>();
    for (const h of largest) buckets.set(h >> 55n, (buckets.get(h >> 55n) ?? 0) + 1);
    expect(largest.length).toBe(149_998);
    expect(Math.max(...buckets.values())).toBeGreaterThan(255);
    // And two of its shingles share their top 32 bits, which the verifier keeps (one value for both): the
    // reference's flags above count them as one too.
    expect(refVerifierSet(texts[40]!, 3).size).toBeLessThan(149_998);
    // The exact boundary on large sets: 180 of 300 shingles (n = 302, m = 182).
    const [common, union] = refCounts(texts[24]!, texts[29]!); // 8 texts per n: n = 302 is the fourth
    expect([common, union]).toEqual([180, 300]);
    const one = { a: Uint32Array.of(24), b: Uint32Array.of(29) };
    expect(jaccardFlags(texts, one.a, one.b, { threshold: 0.6, width: 3 })[0]).toBe(1);
    expect(jaccardFlags(texts, one.a, one.b, { threshold: 0.6 + 2 * Number.EPSILON, width: 3 })[0]).toBe(0);
  });

  it('empty and wordless documents: no shingles; kept only with a trimmed-identical wordless text', () => {
    const texts = ['', '©', ' © ', '%s', '???', '', 'word', new TextEncoder().encode(' © '), new Uint8Array([0xff])];
    const { a, b } = allPairs(texts.length);
    const flags = jaccardFlags(texts, a, b, { threshold: 0.6, width: 3 });
    for (let p = 0; p < a.length; p++) {
      expect(flags[p], `${a[p]} ${b[p]}`).toBe(refKeep(texts[a[p]!]!, texts[b[p]!]!, 3, 0.6) ? 1 : 0);
    }
    expect(shingleSets(texts, 3).map((s) => s.length)).toEqual([0, 0, 0, 1, 0, 0, 1, 0, 0]); // '%s' has the word s
  });

  it('batches larger than one window give the same flags as one window, and bytes as strings', () => {
    const texts = families(31, 150, 30);
    const bytes = texts.map((t) => new TextEncoder().encode(t));
    const next = rng(32);
    const a = Uint32Array.from({ length: 3000 }, () => Math.floor(next() * texts.length));
    const b = Uint32Array.from({ length: 3000 }, () => Math.floor(next() * texts.length));
    const options = { threshold: 0.5, width: 3 };
    const whole = jaccardFlags(texts, a, b, options);
    for (const window of [1, 100, 2000]) {
      expect(jaccardFlags(texts, a, b, options, window)).toEqual(whole);
      expect(jaccardFlags(bytes, a, b, options, window)).toEqual(whole);
    }
    for (let p = 0; p < a.length; p += 7) expect(whole[p]).toBe(refKeep(texts[a[p]!]!, texts[b[p]!]!, 3, 0.5) ? 1 : 0);
  });

  it('with a forest, the kept pairs are the spanning forest of the verified pairs, in any windows', () => {
    // Wordless texts among them: their pairs are decided in JavaScript, and later windows must see those joins.
    const texts = [...families(71, 160, 12), '%s', ' %s ', '©', '%s', '', '%s'];
    const { a, b } = allPairs(texts.length);
    const options = { threshold: 0.5, width: 3 };
    const all = jaccardFlags(texts, a, b, options);
    const pairs = { a, b, distance: new Uint8Array(a.length) };
    const want = spanningPairs(texts.length, keepFlagged(pairs, all));
    expect(want.a.length).toBeGreaterThan(20);
    // Checks: the pairs whose documents the similar pairs before them had not connected (a plain union-find).
    const parent = texts.map((_, i) => i);
    const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x]!)));
    let wantChecks = 0;
    for (let p = 0; p < a.length; p++) {
      const [ri, rj] = [find(a[p]!), find(b[p]!)];
      if (ri === rj) continue;
      wantChecks++;
      if (all[p] === 1) parent[Math.max(ri, rj)] = Math.min(ri, rj);
    }
    for (const window of [VERIFY_WINDOW_BYTES, 300, 1]) {
      const checks = PairChecks.connected(texts.length);
      const got = keepFlagged(pairs, jaccardFlags(texts, a, b, options, window, checks));
      expect(Array.from(got.a), `window ${window}`).toEqual(Array.from(want.a));
      expect(Array.from(got.b), `window ${window}`).toEqual(Array.from(want.b));
      expect(checks.checks, `window ${window}`).toBe(wantChecks);
    }
  });

  it('a call that fails while loading a window leaves the next call of the same verification correct', () => {
    const texts = families(73, 120, 10);
    const { a, b } = allPairs(texts.length);
    const options = { threshold: 0.5, width: 3 };
    // The clusters of the plain reference rule over every pair.
    const parent = texts.map((_, i) => i);
    const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x]!)));
    for (let p = 0; p < a.length; p++)
      if (refKeep(texts[a[p]!]!, texts[b[p]!]!, 3, 0.5))
        parent[Math.max(find(a[p]!), find(b[p]!))] = Math.min(find(a[p]!), find(b[p]!));
    expect(texts.some((_, d) => find(d) !== d)).toBe(true);
    const inner = textSource(texts, 3);
    let fail = false;
    let loads = 0;
    const failing: SetSource = {
      ...inner,
      load: (rt, docs) => {
        if (fail && ++loads === 1) throw new Error('the set store could not be read');
        return inner.load(rt, docs);
      },
    };
    // A first call on half the pairs; the second half then fails as its first window loads, the window's
    // documents marked; the call again, with the same verification and source, must not take those marks for
    // documents already loaded.
    const checks = PairChecks.connected(texts.length);
    const half = a.length >> 1;
    pairFlags(texts.length, failing, a.subarray(0, half), b.subarray(0, half), options, checks, 2000);
    fail = true;
    const [a2, b2] = [a.subarray(half), b.subarray(half)];
    expect(() => pairFlags(texts.length, failing, a2, b2, options, checks, 2000)).toThrow('could not be read');
    pairFlags(texts.length, failing, a2, b2, options, checks, 2000);
    const forest = checks.forest!;
    expect(Array.from(forest, (_, d) => forestRoot(forest, d))).toEqual(texts.map((_, d) => find(d)));
  });

  it('selectWindow (the window chosen in WebAssembly) equals the plain selection, on seeded random pairs', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as VerifyKernels;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 3000 }), // whole, as the costs: a window that fills exactly is met
        (n, m, seed, budget) => {
          const next = rng(seed);
          const a = Uint32Array.from({ length: m }, () => Math.floor(next() * n));
          const b = Uint32Array.from({ length: m }, () => Math.floor(next() * n));
          const cost = Float64Array.from({ length: n }, () => Math.floor(next() * 200) + (next() < 0.1 ? 2 ** 33 : 0));
          const forest = Uint32Array.from({ length: n }, (_, i) => i);
          for (let u = 0; u < n / 3; u++) forestJoin(forest, Math.floor(next() * n), Math.floor(next() * n));
          const from = m === 0 ? 0 : Math.floor(next() * m);
          // The plain selection (pair-checks.ts before the kernel).
          const inWindow = new Set<number>();
          const members: number[] = [];
          const taken: number[] = [];
          let bytes = 0;
          let p = from;
          for (; p < m; p++) {
            const [i, j] = [a[p]!, b[p]!];
            if (forestRoot(forest, i) === forestRoot(forest, j)) continue;
            const more = (inWindow.has(i) ? 0 : cost[i]!) + (inWindow.has(j) || i === j ? 0 : cost[j]!);
            if (taken.length > 0 && bytes + more > budget) break;
            bytes += more;
            for (const d of [i, j]) if (!inWindow.has(d)) inWindow.add(d) && members.push(d);
            taken.push(p);
          }
          const [aAt, bAt, fAt, lAt, cAt, mAt, paAt, pbAt, tAt, countsAt] = verifyRegions(rt.heap).select.reserveParts([
            4 * m,
            4 * m,
            4 * n,
            4 * n,
            8 * n,
            8 * m,
            4 * m,
            4 * m,
            4 * m,
            8,
          ]) as number[] as [number, number, number, number, number, number, number, number, number, number];
          const { u32, f64 } = rt.heap;
          u32.set(a, aAt >>> 2);
          u32.set(b, bAt >>> 2);
          u32.set(forest, fAt >>> 2);
          u32.fill(0xffffffff, lAt >>> 2, (lAt >>> 2) + n);
          f64.set(cost, cAt >>> 3);
          const got = k.selectWindow(aAt, bAt, from, m, fAt, lAt, cAt, budget, mAt, paAt, pbAt, tAt, countsAt);
          expect(got).toBe(p);
          const [memberCount, pairCount] = [u32[countsAt >>> 2]!, u32[(countsAt >>> 2) + 1]!];
          expect(Array.from(u32.subarray(mAt >>> 2, (mAt >>> 2) + memberCount))).toEqual(members);
          expect(Array.from(u32.subarray(tAt >>> 2, (tAt >>> 2) + pairCount))).toEqual(taken);
          expect(Array.from(u32.subarray(paAt >>> 2, (paAt >>> 2) + pairCount))).toEqual(taken.map((q) => a[q]));
          expect(Array.from(u32.subarray(pbAt >>> 2, (pbAt >>> 2) + pairCount))).toEqual(taken.map((q) => b[q]));
          const marked = Array.from(new Int32Array(u32.buffer, lAt, n).keys()).filter(
            (d) => u32[(lAt >>> 2) + d] !== 0xffffffff,
          );
          expect(marked).toEqual([...inWindow].sort((x, y) => x - y));
          // Its path halving leaves every document's root as it was.
          for (let d = 0; d < n; d++) {
            let r = d;
            while (u32[(fAt >>> 2) + r] !== r) r = u32[(fAt >>> 2) + r]!;
            expect(r).toBe(forestRoot(forest, d));
          }
        },
      ),
      { seed: 20261205, numRuns: 400 },
    );
  });

  it("one pass (fingerprintWithSets) gives simhashMany's fingerprints and the reference's sets, 64 and 128 bits", () => {
    const next = rng(81);
    const texts: (string | Uint8Array)[] = families(83, 90, 12);
    // Dense Han text outgrows the first set memory; lone surrogates, bytes, empty and short documents too.
    texts.push(String.fromCodePoint(...Array.from({ length: 1500 }, () => 0x4e00 + Math.floor(next() * 20000))));
    texts.push('', '©', 'one', 'one two', 'a\ud800b c d', new TextEncoder().encode('bytes as a document, too'));
    for (let i = 0; i < 30; i++) texts.push(randomDocument(next, 12));
    const docs = texts.map((_, i) => i).filter((i) => i % 7 !== 3); // a subset, as dedup's distinct texts
    for (const [bits, chunk] of [
      [64, PASS_CHUNK_BYTES],
      [128, PASS_CHUNK_BYTES],
      [64, 1],
      [128, 2000],
    ] as const) {
      const plan = createSimHasher({ bits }).options;
      expect(fingerprintsShareShingles(plan, { width: 3 })).toBe(true);
      const { fingerprints, featureCounts, prebuilt } = fingerprintWithSets(texts, docs, plan, chunk);
      const want = createSimHasher({ bits }).hashManyDetailed(docs.map((d) => texts[d]!));
      expect(Array.from(fingerprints), `${bits} bits`).toEqual(Array.from(want.fingerprints));
      expect(Array.from(featureCounts), `${bits} bits`).toEqual(Array.from(want.featureCounts));
      // The sets, read where verification will read them, against the plain reference.
      const { sets, starts } = prebuilt.built();
      const u32 = wasm().heap.u32;
      for (const d of docs) {
        const q = prebuilt.setOf[d]!;
        const s = u32[(starts >>> 2) + q]!;
        const e = u32[(starts >>> 2) + q + 1]!;
        const text = typeof texts[d] === 'string' ? (texts[d] as string) : new TextDecoder().decode(texts[d]);
        const expected = [...refVerifierSet(text, 3)].sort((x, y) => x - y);
        expect([...u32.slice((sets >>> 2) + s, (sets >>> 2) + e)], JSON.stringify(text).slice(0, 40)).toEqual(expected);
      }
      expect(docs.filter((d) => prebuilt.setOf[d]! < 0)).toEqual([]);
      expect(prebuilt.setOf[3]).toBe(-1);
      // And verification on them equals verification that reads the texts again.
      const { a, b } = allPairs(texts.length);
      const inDocs = (i: number) => i % 7 !== 3;
      const keep = Array.from(a.keys()).filter((p) => inDocs(a[p]!) && inDocs(b[p]!));
      const pa = Uint32Array.from(keep, (p) => a[p]!);
      const pb = Uint32Array.from(keep, (p) => b[p]!);
      const options = { threshold: 0.5, width: 3 };
      const again = fingerprintWithSets(texts, docs, plan).prebuilt;
      const viaSets = jaccardFlags(texts, pa, pb, options, VERIFY_WINDOW_BYTES, PairChecks.all(), again);
      const plain = jaccardFlags(texts, pa, pb, options);
      expect(Array.from(viaSets)).toEqual(Array.from(plain));
      expect(viaSets.some((f) => f === 1)).toBe(true);
      // That verification reused the set memory: the sets built before it are refused, not read.
      expect(() => again.built()).toThrow('overwritten');
      const fresh = fingerprintWithSets(texts, docs, plan).prebuilt;
      const forestFlags = jaccardFlags(
        texts,
        pa,
        pb,
        options,
        VERIFY_WINDOW_BYTES,
        PairChecks.connected(texts.length),
        fresh,
      );
      expect(Array.from(forestFlags)).toEqual(
        Array.from(jaccardFlags(texts, pa, pb, options, 500, PairChecks.connected(texts.length))),
      );
    }
    // Other features than the verifier's shingles: not shared.
    for (const options of [{ tokenizer: 'words' }, { width: 4 }, { normalize: 'NFKC' }, { preset: 'java' }] as const)
      expect(fingerprintsShareShingles(createSimHasher(options).options, { width: 3 })).toBe(false);
  });

  it('dedup verifies with word shingles whatever tokenizer fingerprints', () => {
    const texts = families(41, 120, 12);
    for (const tokenizer of ['shingles', 'words', 'whitespace', 'ngrams', 'segmenter'] as const) {
      const r = dedup(texts, { tokenizer, k: 20, pairs: 'all' });
      const found = findNearDuplicates(r.fingerprints, { k: 20 });
      const expected: string[] = [];
      for (let p = 0; p < found.a.length; p++) {
        const [i, j] = [found.a[p]!, found.b[p]!];
        if (refKeep(texts[i]!, texts[j]!, 3, 0.6)) expected.push(`${i},${j}`);
      }
      expect(
        Array.from(r.pairs.a, (x, p) => `${x},${r.pairs.b[p]}`),
        tokenizer,
      ).toEqual(expected);
    }
  });
});

const sample = fs
  .readFileSync(new URL('../../data/sample/licenses.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(0, 800)
  .map((l) => (JSON.parse(l) as { text: string }).text);

describe('verification of candidate pairs', () => {
  it('keeps exactly the candidates whose shingle Jaccard reaches the threshold', () => {
    const fps = simhashMany(sample);
    const candidates = findNearDuplicates(fps, { k: 12 });
    expect(candidates.a.length).toBeGreaterThan(50);
    for (const threshold of [0.3, 0.6, 0.9, 1]) {
      const kept = verifyPairs(sample, candidates, { threshold });
      const expected: string[] = [];
      for (let p = 0; p < candidates.a.length; p++) {
        const [i, j] = [candidates.a[p]!, candidates.b[p]!];
        const wordless = refSet(sample[i]!).size === 0 && refSet(sample[j]!).size === 0;
        if (wordless ? sample[i]!.trim() === sample[j]!.trim() : refKeep(sample[i]!, sample[j]!, 3, threshold))
          expected.push(`${i},${j},${candidates.distance[p]}`);
      }
      const got = Array.from(kept.a, (a, p) => `${a},${kept.b[p]},${kept.distance[p]}`);
      expect(got).toEqual(expected);
    }
  });

  it('wordless documents pair only with identical (trimmed) texts', () => {
    const texts = [
      '©',
      '%%',
      '???',
      ' ??? ',
      '',
      'a real sentence with several words',
      'a real sentence with several words!',
    ];
    const r = dedup(texts);
    expect(r.featureCounts.slice(0, 5)).toEqual(new Float64Array(5));
    expect(r.clusterOf[3]).toBe(2);
    expect(new Set([r.clusterOf[0], r.clusterOf[1], r.clusterOf[2], r.clusterOf[4]]).size).toBe(4);
    expect(r.clusterOf[6]).toBe(5);
    const plain = dedup(texts, { verify: false });
    expect(plain.clusterOf[3]).toBe(2);
    expect(new Set([plain.clusterOf[0], plain.clusterOf[1], plain.clusterOf[2], plain.clusterOf[4]]).size).toBe(4);
  });

  it('dedup defaults: k 12 (64 bits) or 21 (128 bits) with verification, 3 or 6 without', () => {
    expect(dedup(sample.slice(0, 50)).k).toBe(12);
    expect(dedup(sample.slice(0, 50), { bits: 128 }).k).toBe(21);
    expect(dedup(sample.slice(0, 50), { verify: false }).k).toBe(3);
    expect(dedup(sample.slice(0, 50), { verify: false, bits: 128 }).k).toBe(6);
    const r = dedup(sample);
    expect(r.verify).toEqual({ threshold: 0.6, width: 3 });
    expect(r.candidates).toBeGreaterThanOrEqual(r.pairs.a.length);
    for (let p = 0; p < r.pairs.a.length; p++) {
      const [i, j] = [r.pairs.a[p]!, r.pairs.b[p]!];
      expect(refKeep(sample[i]!, sample[j]!, 3, 0.6), `${i} ${j}`).toBe(true);
    }
  });

  it('rejects bad verification options and pairs', () => {
    expect(() => dedup(['a'], { verify: { threshold: 0 } })).toThrow(RangeError);
    expect(() => dedup(['a'], { verify: { threshold: '0.5' as unknown as number } })).toThrow(TypeError);
    expect(() => dedup(['a'], { verify: { width: 0 } })).toThrow(/width/);
    expect(() => dedup(['a'], { verify: { treshold: 0.5 } as never })).toThrow(/treshold/);
    const pairs = { a: new Uint32Array([0]), b: new Uint32Array([5]), distance: new Uint8Array([1]) };
    expect(() => verifyPairs(['x', 'y'], pairs)).toThrow(RangeError);
    expect(() => verifyPairs(['x', 'y'], { a: [0], b: [1] } as never)).toThrow(TypeError);
    expect(() =>
      dropFeaturelessPairs(
        ['x', 'y'],
        { a: new Uint32Array(0), b: new Uint32Array(0), distance: new Uint8Array(0) },
        new Float64Array(1),
      ),
    ).toThrow(TypeError);
  });
});
