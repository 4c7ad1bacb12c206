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
import { loadReference } from '../reference.js';
import { refCounts } from './jaccard-reference.js';

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
