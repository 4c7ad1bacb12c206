// Exact copies collapse first: dedup groups identical texts and fingerprints before the join, and must give the
// clusters (and with pairs: 'all' the pairs) of the plain pipeline: every pair within k by brute force, verified
// by the reference rule, clustered by a plain union-find (or the plain centre rule).
import { beforeAll, describe, expect, it } from 'vitest';
import { createSimHasher, dedup, findNearDuplicates, simhashMany } from '../../src/index.js';
import { pairsSharingTopBits } from '../../src/join/find-near-duplicates.js';
import { MAX_JOIN_PAIRS } from '../../src/dedup/dedup-groups.js';
import { contentHashes, exactCopies, firstOfEqual, sameText } from '../../src/dedup/exact-copies.js';
import { loadReference, rng } from '../reference.js';
import { families, refKeep } from './jaccard-reference.js';
import { asStrings, unionFind } from '../join/join-reference.js';

beforeAll(loadReference);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A corpus with many exact copies: families of near copies, then copies as the same string, a new string, bytes. */
function copyHeavy(seed: number, distinct: number, copies: number): Array<string | Uint8Array> {
  const next = rng(seed);
  const base = families(seed, distinct, 10);
  base.push('', '', ' ', '©', ' © ', '%%', '???');
  const out: Array<string | Uint8Array> = [...base];
  for (let c = 0; c < copies; c++) {
    const t = base[Math.floor(next() * base.length)]!;
    const r = next();
    out.push(r < 0.4 ? t : r < 0.7 ? `${t} `.slice(0, t.length) : encoder.encode(t));
  }
  // Shuffle, so copies come before and after their first occurrence.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function popcount64(x: bigint): number {
  let c = 0;
  while (x) {
    x &= x - 1n;
    c++;
  }
  return c;
}

const plain = (t: string | Uint8Array) => (typeof t === 'string' ? t : decoder.decode(t));

/** Every pair (i < j) within k whose texts pass the reference rule (or, unverified, dropFeaturelessPairs' rule). */
function referencePairs(texts: Array<string | Uint8Array>, k: number, verified: boolean): string[] {
  const fps = simhashMany(texts);
  const counts = createSimHasher().hashManyDetailed(texts).featureCounts;
  const out: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const d = popcount64(fps[i]! ^ fps[j]!);
      if (d > k) continue;
      const keep = verified
        ? refKeep(texts[i]!, texts[j]!, 3, 0.6)
        : counts[i]! > 0 && counts[j]! > 0
          ? true
          : counts[i] === 0 && counts[j] === 0 && plain(texts[i]!).trim() === plain(texts[j]!).trim();
      if (keep) out.push(`${i},${j},${d}`);
    }
  }
  return out;
}

/** The plain centre rule: in index order, each unclustered document takes every unclustered neighbour. */
function centres(n: number, pairs: string[]): number[] {
  const nb: number[][] = Array.from({ length: n }, () => []);
  for (const p of pairs) {
    const [a, b] = p.split(',').map(Number) as [number, number];
    nb[a]!.push(b);
    nb[b]!.push(a);
  }
  const of = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (of[i] !== -1) continue;
    of[i] = i;
    for (const j of nb[i]!) if (of[j] === -1) of[j] = i;
  }
  return of;
}

describe('exact copies', () => {
  it('exactCopies gives the first identical text, as a plain scan comparing texts finds it', () => {
    const texts = copyHeavy(3, 60, 300);
    texts.push('\ud800', '\ufffd', encoder.encode('\ufffd'), '\ud800');
    expectPlainFirst(texts);
  });

  it('exactCopies on strings only and on bytes only (texts that share a sampled key) equals the plain scan', () => {
    // Same length and same sampled positions, one code unit apart at an unsampled one: the cheap key is shared,
    // so only the content hash tells them apart; copies of each must still be found, before and after.
    const a = 'x'.repeat(100);
    const b = `x${'y'}${'x'.repeat(98)}`;
    const strings = [...copyHeavy(4, 40, 200).map(plain), a, b, 'z', b, a, '', '', 'é', '\ud800'];
    expectPlainFirst(strings);
    expectPlainFirst(strings.map((t) => encoder.encode(t)));
    expectPlainFirst(['only one']);
    expectPlainFirst([]);
  });

  it('many texts sharing one cheap key, in every order: equal ones copy the first, the others group apart (seeded)', () => {
    // Length 100 and the same sampled positions (0, 6, 13, …, 99): variants differ at unsampled positions only, so
    // each text is either equal to its key's first text or must be grouped by content among the rest.
    const variants = Array.from({ length: 5 }, (_, v) => {
      const units = Array<string>(100).fill('x');
      if (v > 0) units[1 + ((v * 7) % 5)] = String.fromCharCode(96 + v);
      return units.join('');
    });
    for (let seed = 1; seed <= 20; seed++) {
      const next = rng(seed);
      const texts = Array.from({ length: 60 }, () => variants[Math.floor(next() * (1 + (seed % 5)))]!);
      expectPlainFirst(texts);
      expectPlainFirst(texts.map((t) => encoder.encode(t)));
    }
  });

  function expectPlainFirst(texts: Array<string | Uint8Array>): void {
    const got = exactCopies(texts);
    expect(got.length).toBe(texts.length);
    texts.forEach((t, i) => {
      let first = i;
      for (let j = 0; j < i; j++) {
        const u = texts[j]!;
        const same =
          typeof t === 'string' && typeof u === 'string'
            ? t === u
            : typeof t !== 'string' && typeof u !== 'string'
              ? t.length === u.length && t.every((x, q) => x === u[q])
              : plain(t) === plain(u);
        if (same) {
          first = j;
          break;
        }
      }
      expect(got[i], `${i}: ${JSON.stringify(plain(t))}`).toBe(first);
    });
  }

  it('content hashes are XXH3 of the UTF-8 bytes with seeds 0 and 1; firstOfEqual on 1 and 2 words', () => {
    const h = contentHashes(['', 'a', encoder.encode('a'), 'é']);
    expect(h[0]).toBe(0x2d06800538d394c2n); // XXH3-64 of the empty input, seed 0 (the XXH3 reference value)
    expect([h[2], h[3]]).toEqual([h[4], h[5]]);
    expect(h[2]).not.toBe(h[6]);
    expect(Array.from(firstOfEqual(BigUint64Array.of(5n, 7n, 5n, 5n, 9n, 7n), 1))).toEqual([0, 1, 0, 0, 4, 1]);
    expect(Array.from(firstOfEqual(BigUint64Array.of(1n, 2n, 1n, 3n, 1n, 2n), 2))).toEqual([0, 1, 0]);
    expect(sameText('é', encoder.encode('é'))).toBe(true);
    expect(sameText('\ud800', encoder.encode('\ufffd'))).toBe(false);
  });
});

describe('dedup collapses exact copies first', () => {
  for (const [seed, k] of [
    [1, 12],
    [2, 20],
    [5, 3],
  ] as const) {
    it(`gives the plain pipeline's clusters and pairs (seed ${seed}, k ${k}), verified or not, both modes`, () => {
      const texts = copyHeavy(seed, 80, 220);
      for (const verified of [true, false]) {
        const want = referencePairs(texts, k, verified);
        const label = `verified ${verified}`;
        const all = dedup(texts, { k, verify: verified ? {} : false, pairs: 'all' });
        expect(asStrings(all.pairs), label).toEqual(want);
        const uf = unionFind(texts.length, want);
        expect(Array.from(all.clusterOf), label).toEqual(uf);
        expect(all.clusterCount, label).toBe(new Set(uf).size);
        const centre = dedup(texts, { k, verify: verified ? {} : false, mode: 'centre' });
        expect(Array.from(centre.clusterOf), `${label} centre`).toEqual(centres(texts.length, want));
        // The default lists fewer pairs, each a reference pair, and they give the same connected clusters.
        const explain = dedup(texts, { k, verify: verified ? {} : false });
        const listed = asStrings(explain.pairs);
        const wanted = new Set(want);
        for (const p of listed) expect(wanted.has(p), `${label}: ${p}`).toBe(true);
        expect(listed.length).toBeLessThanOrEqual(want.length);
        expect(unionFind(texts.length, listed), label).toEqual(uf);
        expect(Array.from(explain.fingerprints)).toEqual(Array.from(simhashMany(texts)));
      }
    });
  }

  it('128-bit fingerprints and other tokenizers: the same clusters as without copies', () => {
    const texts = copyHeavy(9, 60, 150);
    for (const options of [
      { bits: 128 as const },
      { tokenizer: 'whitespace' as const },
      { tokenizer: 'words' as const },
    ]) {
      const r = dedup(texts, { ...options, k: 12, pairs: 'all' });
      const found = findNearDuplicates(simhashMany(texts, options), { k: 12, bits: options.bits ?? 64 });
      const want: string[] = [];
      for (let p = 0; p < found.a.length; p++)
        if (refKeep(texts[found.a[p]!]!, texts[found.b[p]!]!, 3, 0.6)) want.push(`${found.a[p]},${found.b[p]}`);
      expect(
        Array.from(r.pairs.a, (a, p) => `${a},${r.pairs.b[p]}`),
        JSON.stringify(options),
      ).toEqual(want);
      expect(Array.from(r.clusterOf)).toEqual(unionFind(texts.length, want));
    }
  });

  it('duplicate-heavy inputs: one cluster each, pairs linear in the documents', () => {
    for (const [label, texts] of [
      ['10^5 identical texts', new Array(1e5).fill('the same short message, sent many times')],
      ['10^6 empty strings', new Array(1e6).fill('')],
      ['10^5 copies of ©', new Array(1e5).fill('©')],
      ['10^5 equal strings, distinct objects', Array.from({ length: 1e5 }, (_, i) => `copy ${'x'.repeat(i % 1)}`)],
    ] as const) {
      const r = dedup(texts as string[]);
      expect(r.clusterCount, label).toBe(1);
      expect(
        r.clusterOf.every((c) => c === 0),
        label,
      ).toBe(true);
      expect(r.pairs.a.length, label).toBe(texts.length - 1);
      expect(r.candidates, label).toBe(0);
    }
    // Wordless texts that differ stay apart, however many copies each has.
    const mixed = [...new Array(5e4).fill('©'), ...new Array(5e4).fill('%%'), ...new Array(5e4).fill(' © ')];
    const r = dedup(mixed);
    expect(r.clusterCount).toBe(2);
    expect(r.clusterOf[1e5]).toBe(0); // ' © ' trims to '©'
    expect(r.clusterOf[5e4]).toBe(5e4);
  });

  it("pairs: 'all' is bounded by maxPairs, failing before the pairs are built", () => {
    const texts = new Array(10).fill('one text, ten times');
    expect(dedup(texts, { pairs: 'all', maxPairs: 45 }).pairs.a.length).toBe(45);
    expect(() => dedup(texts, { pairs: 'all', maxPairs: 44 })).toThrow(/45 pairs, more than maxPairs \(44\)/);
    expect(() => dedup(new Array(1e5).fill('x y z'), { pairs: 'all' })).toThrow(RangeError);
    expect(() => dedup(new Array(1e5).fill('x y z'), { pairs: 'all' })).toThrow(/4999950000 pairs/);
    expect(() => dedup(texts, { pairs: 'some' as 'all' })).toThrow(RangeError);
    expect(() => dedup(texts, { pairs: 1 as unknown as 'all' })).toThrow(TypeError);
    expect(() => dedup(texts, { maxPairs: -1 })).toThrow(RangeError);
    expect(() => dedup(texts, { maxPairs: 1.5 })).toThrow(/maxPairs/);
    // The library stays usable after the error.
    expect(dedup(texts).clusterCount).toBe(1);
  });

  it('the quick bound counts the pairs that share top bits exactly, past 255 to a bucket too (seeded)', () => {
    const next = rng(4242);
    const word = () => BigInt(Math.floor(next() * 2 ** 32)) | (BigInt(Math.floor(next() * 2 ** 32)) << 32n);
    for (const [n, words] of [
      [2e4, 1],
      [2e5, 1],
      [3e4, 2],
    ] as const) {
      const fps = new BigUint64Array(n * words);
      for (let i = 0; i < fps.length; i++) fps[i] = word();
      // Groups that share their top 24 bits, so each fills one bucket past what a byte counts.
      let at = 0;
      for (const size of [256, 300, 1500, 4000]) {
        const top = word() & (0xffffffn << 40n);
        for (let j = 0; j < size; j++, at++) fps[at * words] = top | (word() & ((1n << 40n) - 1n));
      }
      // Plain: the same number of top bits, counted in a Map.
      const b = Math.max(8, Math.min(24, Math.ceil(Math.log2((n * n) / 2 / (MAX_JOIN_PAIRS / 2)))));
      const counts = new Map<bigint, number>();
      for (let i = 0; i < n; i++) {
        const key = fps[i * words]! >> BigInt(64 - b);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      let expected = 0;
      for (const c of counts.values()) expected += (c * (c - 1)) / 2;
      expect(pairsSharingTopBits(fps, words), `n ${n}, ${words * 64} bits`).toBe(expected);
    }
  });

  it('findNearDuplicates counts identical fingerprints before it allocates and names the count', () => {
    const fps = new BigUint64Array(1e5).fill(42n);
    expect(() => findNearDuplicates(fps, { k: 3 })).toThrow(/at least 4999950000 pairs/);
    const fine = new BigUint64Array(2000).fill(42n);
    expect(findNearDuplicates(fine, { k: 0 }).a.length).toBe((2000 * 1999) / 2);
    // 2·10^4 fingerprints (more pairs in all than the limit) that share their top 24 bits but are all distinct: the
    // quick bound (pairs within buckets of the top 8 to 24 bits) is over the limit, so the exact count decides, and
    // finds no identical pair to refuse.
    const distinct = new BigUint64Array(2e4);
    for (let i = 0; i < 2e4; i++) distinct[i] = (0xabcdefn << 40n) | BigInt(i * 0x10001);
    const within = findNearDuplicates(distinct, { k: 0 });
    expect(within.a.length).toBe(0);
    // 128 bits: identical low words, distinct high words, are not identical fingerprints either.
    const wide = new BigUint64Array(4e4);
    for (let i = 0; i < 2e4; i++) {
      wide[2 * i] = 42n;
      wide[2 * i + 1] = (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    }
    expect(findNearDuplicates(wide, { k: 0, bits: 128 }).a.length).toBe(0);
    const wideSame = new BigUint64Array(4e4).fill(7n);
    expect(() => findNearDuplicates(wideSame, { k: 0, bits: 128 })).toThrow(/at least 199990000 pairs/);
  });
});
