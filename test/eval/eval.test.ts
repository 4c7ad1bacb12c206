import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { jaccard, shingleSets, similarPairs, similarPairsBruteForce } from '../../src/eval/ground-truth.js';
import { JOIN_FROM, pairsWithin, pairsWithinFast } from '../../src/eval/hamming-join.js';
import { bestPoint, curve, makeTruth } from '../../src/eval/metrics.js';
import { lineChart } from '../../src/eval/plot.js';
import { curveWithPolicy, evaluateConfig, evaluateVerified, groundTruth, type Corpus } from '../../src/eval/runner.js';
import { readCorpus } from '../../src/eval/cli.js';
import {
  createVerifier,
  jaccardSorted,
  minhashSketch,
  shingleHashes,
  shingles,
  sketchJaccard,
  words,
} from '../../src/dedup/shingle-jaccard.js';

const corpora = new Map<string, Corpus>();
const corpus = (name: string): Corpus => {
  let c = corpora.get(name);
  if (!c) corpora.set(name, (c = readCorpus(new URL(`../../data/eval/${name}.jsonl`, import.meta.url).pathname)));
  return c;
};
const truths = new Map<string, ReturnType<typeof groundTruth>>();
const truthOf = (name: string): ReturnType<typeof groundTruth> => {
  let t = truths.get(name);
  if (!t) truths.set(name, (t = groundTruth(corpus(name))));
  return t;
};

/** Seeded texts over a small vocabulary, with edited copies so that many pairs are near the thresholds. */
function syntheticTexts(seed: number, n: number): string[] {
  let s = seed >>> 0;
  const rand = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const vocabulary = ['a', 'b', 'c', 'd', 'e', 'f', 'g', '猫', '犬', 'Ω'];
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (texts.length > 0 && rand() < 0.5) {
      const w = words(texts[Math.floor(rand() * texts.length)]!);
      const edits = Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * (w.length + 1));
        if (rand() < 0.5) w.splice(at, 1);
        else w.splice(at, 0, vocabulary[Math.floor(rand() * vocabulary.length)]!);
      }
      texts.push(w.join(' '));
    } else {
      const len = Math.floor(rand() * 14);
      texts.push(Array.from({ length: len }, () => vocabulary[Math.floor(rand() * vocabulary.length)]!).join(' '));
    }
  }
  return texts;
}

describe('words and shingles', () => {
  it('splits on non-word characters, folds case and makes each Han/kana character a word', () => {
    expect(words('Hello, WORLD! café')).toEqual(['hello', 'world', 'café']);
    expect(words('这是经典的Hello程序')).toEqual(['这', '是', '经', '典', '的', 'hello', '程', '序']);
    expect(words('カタカナとひらがな')).toHaveLength(9);
    expect(words('--- *** ...')).toEqual([]);
  });
  it('makes width-word shingles; a shorter text is one shingle, a text without words has none', () => {
    expect([...shingles('a b c d')]).toEqual(['a b c', 'b c d']);
    expect([...shingles('a b c a b c')]).toEqual(['a b c', 'b c a', 'c a b']);
    expect([...shingles('two words')]).toEqual(['two words']);
    expect(shingles('   ').size).toBe(0);
    expect([...shingles('a b c d', 1)]).toEqual(['a', 'b', 'c', 'd']);
  });
  it('rejects a bad width', () => {
    expect(() => shingles('a', 0)).toThrow(RangeError);
    expect(() => shingles('a', 1.5)).toThrow(RangeError);
    expect(() => shingles('a', '3' as unknown as number)).toThrow(TypeError);
  });
});

describe('ground truth: the prefix-filtered join equals brute force', () => {
  it('on seeded synthetic corpora at several thresholds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.constantFrom(0.2, 0.5, 0.6, 0.8, 0.9, 1),
        fc.constantFrom(1, 2, 3),
        (seed, t, width) => {
          const sets = shingleSets(syntheticTexts(seed, 60), width);
          expect(similarPairs(sets, t)).toEqual(similarPairsBruteForce(sets, t));
        },
      ),
      { seed: 60, numRuns: 60 },
    );
  });
  it('on a slice of the shipped licence corpus and all of the shipped Chinese pages', () => {
    const licenses = corpus('licenses').texts.slice(0, 160);
    const zh = corpus('rbe-zh').texts;
    for (const texts of [licenses, zh]) {
      const sets = shingleSets(texts);
      for (const t of [0.5, 0.8]) {
        const fast = similarPairs(sets, t);
        expect(fast).toEqual(similarPairsBruteForce(sets, t));
        expect(fast.length).toBeGreaterThan(0);
      }
    }
  });
  it('verifies far fewer candidates than all pairs on a large corpus', () => {
    const texts = corpus('messages-zh').texts;
    const stats = { candidates: 0 };
    similarPairs(shingleSets(texts), 0.5, stats);
    expect(stats.candidates).toBeLessThan((texts.length * (texts.length - 1)) / 2 / 100);
  });
  it('handles empty sets, identical sets and threshold edges', () => {
    const sets = shingleSets(['', '', 'a b c', 'a b c', 'a b c d', '...']);
    const pairs = similarPairs(sets, 0.5);
    expect(pairs).toEqual(similarPairsBruteForce(sets, 0.5));
    // Empty documents are similar to nothing, not to each other; 'a b c' vs 'a b c d' is 1/2 exactly.
    expect(pairs).toEqual([
      { a: 2, b: 3, jaccard: 1 },
      { a: 2, b: 4, jaccard: 0.5 },
      { a: 3, b: 4, jaccard: 0.5 },
    ]);
    expect(similarPairs(sets, 0.51)).toEqual([{ a: 2, b: 3, jaccard: 1 }]);
    expect(() => similarPairs(sets, 0)).toThrow(RangeError);
    expect(() => similarPairs(sets, 1.5)).toThrow(RangeError);
  });
});

describe('verify', () => {
  it('exact verification equals the ground truth Jaccard', () => {
    const texts = corpus('licenses').texts.slice(0, 80);
    const sets = shingleSets(texts);
    const v = createVerifier(texts);
    for (let a = 0; a < texts.length; a += 3) {
      for (let b = a + 1; b < texts.length; b += 5) expect(v.similarity(a, b)).toBe(jaccard(sets[a]!, sets[b]!));
    }
  });
  it('a MinHash sketch estimates Jaccard within its sampling error', () => {
    const texts = corpus('rbe-zh').texts;
    const truth = truthOf('rbe-zh');
    const hashes = texts.map((t) => shingleHashes(t));
    const sketches = hashes.map((h) => minhashSketch(h, 128));
    let worst = 0;
    for (const p of truth.pairs)
      worst = Math.max(worst, Math.abs(sketchJaccard(sketches[p.a]!, sketches[p.b]!) - p.jaccard));
    // sd of the estimate is at most sqrt(0.25/128) = 0.044; 4.5 sd over ~70 pairs.
    expect(worst).toBeLessThan(0.2);
    expect(sketchJaccard(sketches[0]!, sketches[0]!)).toBe(1);
    expect(sketchJaccard(minhashSketch(new BigUint64Array(0)), minhashSketch(new BigUint64Array(0)))).toBe(0);
    expect(jaccardSorted(hashes[0]!, hashes[0]!)).toBe(1);
  });
  it('rejects bad arguments before doing any work', () => {
    expect(() => createVerifier(['a'], { method: 'fuzzy' as 'exact' })).toThrow(RangeError);
    expect(() => createVerifier(['a', 3 as unknown as string])).toThrow(TypeError);
    expect(() => createVerifier(['a']).similarity(0, 1)).toThrow(RangeError);
    expect(() => sketchJaccard(new Uint32Array(2), new Uint32Array(3))).toThrow(RangeError);
  });
});

describe('hamming join', () => {
  const reference = (fps: BigUint64Array, bits: 64 | 128, k: number): string[] => {
    const words = bits === 128 ? 2 : 1;
    const n = fps.length / words;
    const out: string[] = [];
    for (let a = 0; a < n; a++) {
      for (let b = a + 1; b < n; b++) {
        let d = 0;
        for (let w = 0; w < words; w++)
          d += (fps[a * words + w]! ^ fps[b * words + w]!).toString(2).replace(/0/g, '').length;
        if (d <= k) out.push(`${a},${b},${d}`);
      }
    }
    return out;
  };
  it('finds exactly the pairs within k (64 and 128 bits), including distance exactly k', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(64, 128) as fc.Arbitrary<64 | 128>,
        fc.integer({ min: 0, max: 40 }),
        (seed, bits, k) => {
          const words = bits === 128 ? 2 : 1;
          let s = BigInt(seed) + 1n;
          const next = (): bigint => (s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn);
          const fps = new BigUint64Array(70 * words);
          for (let i = 0; i < fps.length; i++) fps[i] = next();
          // Plant near copies: flip exactly k and k+1 bits of earlier fingerprints.
          for (let i = 10; i < 70; i += 3) {
            const src = Number(next() % BigInt(i));
            for (let w = 0; w < words; w++) fps[i * words + w] = fps[src * words + w]!;
            const flips = (i % 2 === 0 ? k : k + 1) % (bits + 1);
            for (let f = 0; f < flips; f++) {
              const bit = (f * 37 + i) % bits;
              fps[i * words + (bit >> 6)]! ^= 1n << BigInt(bit & 63);
            }
          }
          const got = pairsWithin(fps, bits, k);
          const list: string[] = [];
          for (let i = 0; i < got.count; i++) list.push(`${got.a[i]},${got.b[i]},${got.distance[i]}`);
          expect(list).toEqual(reference(fps, bits, k));
        },
      ),
      { seed: 40, numRuns: 40 },
    );
  });

  it("the library's join gives the same pairs as the scan on a corpus above the switch-over size", () => {
    for (const bits of [64, 128] as const) {
      const words = bits / 64;
      let s = 987654321n;
      const next = (): bigint => (s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn);
      const n = JOIN_FROM + 300;
      const fps = new BigUint64Array(n * words);
      for (let i = 0; i < fps.length; i++) fps[i] = next();
      // Near copies at every distance up to about bits/4 (four random masks ANDed: ~1/16 of the bits set).
      for (let i = 100; i < n; i += 5)
        for (let w = 0; w < words; w++)
          fps[i * words + w] = fps[(i - 99) * words + w]! ^ (next() & next() & next() & next());
      const list = (p: ReturnType<typeof pairsWithin>): string[] =>
        Array.from({ length: p.count }, (_, i) => `${p.a[i]},${p.b[i]},${p.distance[i]}`).sort();
      const scan = pairsWithin(fps, bits, bits / 4);
      expect(scan.count).toBeGreaterThan(100);
      expect(list(pairsWithinFast(fps, bits, bits / 4))).toEqual(list(scan));
    }
  });
});

describe('metrics', () => {
  it('counts precision at J >= 0.5 and recall at J >= 0.8 for every k', () => {
    // 5 documents; true pairs: (0,1) 0.9, (0,2) 0.6, (3,4) 0.85. Reported: (0,1)@0, (0,2)@1, (1,3)@1, (3,4)@3.
    const truth = makeTruth(
      [
        { a: 0, b: 1, jaccard: 0.9 },
        { a: 0, b: 2, jaccard: 0.6 },
        { a: 3, b: 4, jaccard: 0.85 },
      ],
      5,
    );
    expect(truth.relevant).toBe(2);
    const pairs = {
      a: Int32Array.of(0, 0, 1, 3),
      b: Int32Array.of(1, 2, 3, 4),
      distance: Uint8Array.of(0, 1, 1, 3),
      count: 4,
    };
    const points = curve(pairs, truth, 4);
    expect(points.map((p) => [p.k, p.reported, p.precision, p.recall])).toEqual([
      [0, 1, 1, 0.5],
      [1, 3, 2 / 3, 0.5],
      [2, 3, 2 / 3, 0.5],
      [3, 4, 3 / 4, 1],
      [4, 4, 3 / 4, 1],
    ]);
    expect(bestPoint(points).k).toBe(3);
    const kept = curve(pairs, truth, 4, (a, b) => !(a === 1 && b === 3));
    expect(kept[4]!.precision).toBe(1);
    expect(curve({ ...pairs, count: 0 }, truth, 1)[1]).toMatchObject({ precision: 1, recall: 0, f1: 0 });
  });
});

describe('plot', () => {
  it('writes a standalone SVG with one path per series and a legend', () => {
    const svg = lineChart(
      [
        {
          name: 'precision',
          color: '#123456',
          points: [
            [0, 1],
            [1, 0.5],
            [2, 0.25],
          ],
        },
        {
          name: 'recall <all>',
          color: '#654321',
          dashed: true,
          points: [
            [0, 0],
            [1, 0.5],
            [2, 1],
          ],
        },
      ],
      { title: 'P & R', xLabel: 'k', yLabel: 'value', markers: [{ x: 1, label: 'best k=1' }] },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('recall &lt;all&gt;');
    expect(svg).toContain('P &amp; R');
    expect(svg).toContain('best k=1');
    expect(svg).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });
});

// Regression guard on the shipped corpora: loose floors, far below the measured figures (see docs/quality.md), so a
// hash or tokenizer change passes but a broken kernel, ground truth or verifier does not.
describe('evaluation numbers on the shipped corpora', () => {
  it('ground truth of the shipped corpora', () => {
    const licenses = truthOf('licenses');
    expect(licenses.pairs.length).toBeGreaterThan(1000);
    expect(licenses.truth.relevant).toBeGreaterThan(200);
    const messages = truthOf('messages-zh');
    expect(messages.truth.relevant).toBeGreaterThan(200);
  });
  it('plain SimHash (shingles/3, 64 bits) and SimHash + exact verification', () => {
    for (const name of ['licenses', 'messages-zh']) {
      const c = corpus(name);
      const gt = truthOf(name);
      const base = evaluateConfig(c, gt.truth, { tokenizer: 'shingles', width: 3, bits: 64 });
      expect(base.best.f1, name).toBeGreaterThan(0.65);
      expect(base.best.k, name).toBeGreaterThanOrEqual(3);
      expect(base.best.k, name).toBeLessThanOrEqual(12);
      const verified = evaluateVerified(base, gt.truth, createVerifier(c.texts), 0.5);
      const at12 = verified.points[12]!;
      expect(at12.precision, name).toBeGreaterThanOrEqual(0.99);
      expect(at12.recall, name).toBeGreaterThanOrEqual(0.88);
      // Documents without features all hash to 0: exact treatment must not lower precision.
      const policy = curveWithPolicy(c, gt.truth, base, 1)[base.best.k]!;
      expect(policy.precision, name).toBeGreaterThanOrEqual(base.best.precision);
    }
  });
  it('whitespace tokens are the weak baseline on text without spaces', () => {
    const c = corpus('messages-zh');
    const gt = truthOf('messages-zh');
    const whitespace = evaluateConfig(c, gt.truth, { tokenizer: 'whitespace', bits: 64 });
    const shingles = evaluateConfig(c, gt.truth, { tokenizer: 'shingles', width: 3, bits: 64 });
    expect(shingles.best.f1).toBeGreaterThan(whitespace.best.f1 + 0.2);
  });
});
