// Verification under Unicode normalization: the fingerprint reads the text normalized (options.normalize), and so
// must the shingle sets that verify a pair. An NFC and an NFD copy of one text have one fingerprint under 'NFC' and
// 'NFKC'; dedup(), dedupStream and the Deduplicator must put them in one cluster, as the reference Jaccard of the
// normalized texts (1) says, in every path that builds sets (dedup's from the texts, the stream's and the
// Deduplicator's in the hashing pass).
import { beforeAll, describe, expect, it } from 'vitest';
import { dedup, dedupWindow } from '../../src/dedup/dedup.js';
import { Deduplicator } from '../../src/dedup/deduplicator.js';
import { dedupStream } from '../../src/dedup/stream.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { loadReference, rng } from '../reference.js';
import { refCounts, referenceClusters } from './jaccard-reference.js';

const composed =
  'Le château médiéval, élevé au-dessus de la rivière, a été restauré après des années de négligence ; ' +
  "les fenêtres à meneaux et la façade ouest ont retrouvé leur éclat d'origine.";
const nfc = composed.normalize('NFC');
const nfd = composed.normalize('NFD');
const other = 'Une tout autre phrase, sans rapport avec la première, parle de trains et de gares en hiver.';

beforeAll(async () => {
  await loadReference();
});

describe('verification reads the texts as the fingerprint does', () => {
  it('the premise: NFC and NFD differ as given, are equal normalized, and share one fingerprint', () => {
    expect(nfc).not.toBe(nfd);
    const [common, union] = refCounts(nfc.normalize('NFC'), nfd.normalize('NFC'));
    expect(common).toBe(union);
    const [rawCommon, rawUnion] = refCounts(nfc, nfd);
    expect(rawCommon / rawUnion).toBeLessThan(0.6);
    for (const normalize of ['NFC', 'NFKC'] as const) {
      const [a, b] = simhashMany([nfc, nfd], { normalize }) as BigUint64Array;
      expect(a).toBe(b);
    }
  });

  for (const normalize of ['NFC', 'NFKC'] as const) {
    for (const bytes of [false, true]) {
      const texts = [nfc, nfd, other].map((t) => (bytes ? new TextEncoder().encode(t) : t));
      const label = `${normalize}, ${bytes ? 'UTF-8 bytes' : 'strings'}`;

      it(`dedup() (${label})`, () => {
        const r = dedup(texts, { normalize });
        expect(Array.from(r.duplicateOf)).toEqual([-1, 0, -1]);
        expect(r.clusterCount).toBe(2);
      });

      it(`dedupStream (${label})`, async () => {
        async function* docs() {
          for (const text of texts) yield { text };
        }
        const r = await dedupStream(docs(), { normalize, reread: () => [] });
        expect(Array.from(r.duplicateOf)).toEqual([-1, 0, -1]);
      });

      it(`Deduplicator.add, in one batch and in two (${label})`, () => {
        const one = new Deduplicator({ normalize }).add(texts);
        expect(Array.from(one.duplicateOf)).toEqual([-1, 0, -1]);
        const d = new Deduplicator({ normalize });
        d.add(texts.slice(0, 1));
        const later = d.add(texts.slice(1));
        expect(Array.from(later.duplicateOf)).toEqual([0, -1]);
      });
    }
  }
});

describe('dedup() under normalization, in one pass and through the set store', () => {
  // dedup() normalizes the texts once and reads them so for everything (fingerprints, shingle sets, wordless texts
  // compared trimmed), in its one pass or, above dedupWindow.bytes of distinct text (256 MiB by default; 0 here),
  // through the set store. '…' is '...' under NFKC (a compatibility decomposition), not under NFC: both are
  // wordless, so their pair is decided by their trimmed, normalized texts.
  const texts = [nfc, nfd, other, '…', ' ... ', '..', `${other} ${nfd}`, `${other} ${nfc}`];
  const want = { NFC: [-1, 0, -1, -1, -1, -1, -1, 6], NFKC: [-1, 0, -1, -1, 3, -1, -1, 6] };

  it('the premise: NFKC turns the ellipsis into three dots, NFC keeps it', () => {
    expect('…'.normalize('NFKC')).toBe('...');
    expect('…'.normalize('NFC')).toBe('…');
  });

  for (const normalize of ['NFC', 'NFKC'] as const) {
    it(`the clusters of the normalized texts, and simhashMany's fingerprints under normalize (${normalize})`, () => {
      const fingerprints = simhashMany(texts, { normalize }) as BigUint64Array;
      const onePass = dedup(texts, { normalize });
      const saved = dedupWindow.bytes;
      dedupWindow.bytes = 0;
      let stored: ReturnType<typeof dedup>;
      try {
        stored = dedup(texts, { normalize });
      } finally {
        dedupWindow.bytes = saved;
      }
      for (const r of [onePass, stored]) {
        expect(Array.from(r.duplicateOf)).toEqual(want[normalize]);
        expect(r.fingerprints).toEqual(fingerprints);
      }
    });
  }
});

describe('dedup() under normalization against the reference on the normalized texts', () => {
  // Seeded groups of copies written in different forms (composed, decomposed, compatibility characters: ligatures,
  // full-width letters, the ellipsis), with small edits, and wordless texts: under each form, the clusters are those
  // of the reference fingerprint and the reference Jaccard rule over every pair of the texts normalized, in the one
  // pass and through the set store.
  // Canonical variants (equal under every form) and compatibility ones (equal under NFKC and NFKD only).
  const canonical: [string, string[]][] = [
    ['é', ['e\u0301']],
    ['ñ', ['n\u0303']],
    ['Å', ['A\u030a', '\u212b']],
  ];
  const compatibility: [string, string[]][] = [
    ['fi', ['\ufb01']],
    ['A', ['\uff21']],
    ['...', ['…']],
  ];
  function corpus(seed: number): string[] {
    const next = rng(seed);
    const int = (m: number) => Math.floor(next() * m);
    const spell = (word: string, compat: boolean) => {
      let out = word;
      for (const [plain, others] of compat ? [...canonical, ...compatibility] : canonical)
        if (next() < 0.5) out = out.split(plain).join(others[int(others.length)]!);
      return out;
    };
    const word = () => `${['café', 'niño', 'Ångström', 'fine', 'Alpha', 'wait...', 'río'][int(7)]}${int(60)}`;
    const texts: string[] = [];
    for (let g = 0; g < 30; g++) {
      const words = Array.from({ length: 12 + int(30) }, word);
      for (let c = 0; c < 1 + int(6); c++) {
        // A third of the copies also use compatibility characters.
        const compat = next() < 1 / 3;
        const copy = words.map((w) => spell(w, compat));
        if (next() < 0.5) copy[int(copy.length)] = spell(word(), compat);
        texts.push(copy.join(' '));
      }
    }
    texts.push('…', ' ... ', '...', '…!', '', ' ');
    for (let i = texts.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [texts[i], texts[j]] = [texts[j]!, texts[i]!];
    }
    return texts;
  }

  for (const normalize of ['NFC', 'NFD', 'NFKC', 'NFKD'] as const) {
    it(`${normalize}: the reference clusters, in one pass and through the set store`, () => {
      for (const seed of [1, 2, 3]) {
        const texts = corpus(seed);
        const want = referenceClusters(texts.map((t) => t.normalize(normalize)));
        expect(new Set(want).size, 'copies in groups').toBeLessThanOrEqual(texts.length - 15);
        expect(Array.from(dedup(texts, { normalize }).clusterOf), `seed ${seed}`).toEqual(want);
        const saved = dedupWindow.bytes;
        dedupWindow.bytes = 0;
        try {
          expect(Array.from(dedup(texts, { normalize }).clusterOf), `seed ${seed}, set store`).toEqual(want);
        } finally {
          dedupWindow.bytes = saved;
        }
      }
    });
  }

  for (const normalize of ['NFC', 'NFKC'] as const) {
    it(`${normalize}: dedupStream and the Deduplicator give the reference clusters too, on one thread and on two`, async () => {
      for (const seed of [1, 2]) {
        const texts = corpus(seed);
        const want = referenceClusters(texts.map((t) => t.normalize(normalize)));
        for (const threads of [1, 2]) {
          async function* docs() {
            for (const text of texts) yield { text };
          }
          const reread = (locators: { offset: ArrayLike<number> }) => Array.from(locators.offset, (i) => texts[i]!);
          const r = await dedupStream(docs(), { normalize, reread, threads });
          expect(Array.from(r.clusterOf), `seed ${seed}, ${threads} threads`).toEqual(want);
        }
        const d = new Deduplicator({ normalize }).add(texts);
        const firsts = want.map((c, i) => (c === i ? -1 : c));
        expect(Array.from(d.duplicateOf), `seed ${seed}, Deduplicator`).toEqual(firsts);
      }
    });
  }

  it('without verification, texts without features pair by their trimmed texts normalized', async () => {
    const texts = ['…', ' ... ', '..', '...!', 'word'];
    const want = { NFC: [-1, -1, -1, -1, -1], NFKC: [-1, 0, -1, -1, -1] };
    for (const normalize of ['NFC', 'NFKC'] as const) {
      expect(Array.from(dedup(texts, { normalize, verify: false }).duplicateOf), normalize).toEqual(want[normalize]);
      async function* docs() {
        for (const text of texts) yield { text };
      }
      const reread = (locators: { offset: ArrayLike<number> }) => Array.from(locators.offset, (i) => texts[i]!);
      const r = await dedupStream(docs(), { normalize, verify: false, reread });
      expect(Array.from(r.duplicateOf), `${normalize}, dedupStream`).toEqual(want[normalize]);
    }
  });

  it('a text that normalization lengthens past what dedup() verifies is refused by name; the module stays usable', () => {
    // U+FDFA is one character and 18 under NFKD: 3.5 Mi of them are 10.5 MiB of UTF-8, and 126 MiB normalized.
    const long = '\ufdfa'.repeat(3.5 * 2 ** 20);
    expect(long.normalize('NFKD').length).toBe(18 * long.length);
    let error: unknown;
    try {
      dedup(['short text here', long], { normalize: 'NFKD' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(
      /^texts\[1\] once normalized \(NFKD\) has \d+ bytes of UTF-8, more than the 67108864/,
    );
    // As given (no normalize) it is within the limit, and the library goes on.
    expect(dedup(['short text here', long.slice(0, 1000)], { normalize: 'NFKD' }).clusterCount).toBe(2);
  });

  it('the forms matter: without normalize, the compatibility forms split groups that NFKC joins', () => {
    const texts = corpus(1);
    const raw = referenceClusters(texts);
    const nfkc = referenceClusters(texts.map((t) => t.normalize('NFKC')));
    expect(new Set(nfkc).size).toBeLessThan(new Set(raw).size);
    expect(Array.from(dedup(texts).clusterOf)).toEqual(raw);
  });
});
