import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { dedup, dropFeaturelessPairs, findNearDuplicates, simhashMany, verifyPairs } from '../../src/index.js';
import { jaccardSorted, shingles } from '../../src/dedup/shingle-jaccard.js';
import { jaccardAtLeast } from '../../src/dedup/verify-pairs.js';

function jaccard(x: string, y: string): number {
  const a = shingles(x);
  const b = shingles(y);
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  for (const s of a) if (b.has(s)) common++;
  return common / (a.size + b.size - common);
}

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
        const wordless = shingles(sample[i]!).size === 0 && shingles(sample[j]!).size === 0;
        if (wordless ? sample[i]!.trim() === sample[j]!.trim() : jaccard(sample[i]!, sample[j]!) >= threshold)
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
      expect(jaccard(sample[i]!, sample[j]!), `${i} ${j}`).toBeGreaterThanOrEqual(0.6);
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

describe('jaccardAtLeast', () => {
  it('answers exactly as the full Jaccard computation on random sorted sets', () => {
    let x = 7;
    const next = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const set = (n: number, range: number) =>
      Float64Array.from(new Set(Array.from({ length: n }, () => Math.floor(next() * range)))).sort();
    for (let trial = 0; trial < 3000; trial++) {
      const range = 5 + Math.floor(next() * 200);
      const a = set(Math.floor(next() * 60), range);
      const b = set(Math.floor(next() * 60), range);
      const t = [0.1, 0.25, 0.5, 0.6, 2 / 3, 0.8, 1][trial % 7]!;
      expect(jaccardAtLeast(a, b, t), `${a} | ${b} | ${t}`).toBe(
        jaccardSorted(a, b) >= t && a.length > 0 && b.length > 0,
      );
    }
  });
});
