// The plain reference of verification: word shingles of test/reference.ts with their spec-2 hashes (which the
// verifier uses whatever the preset; call loadReference first), as bigint sets, and the rule dedup applies to a pair. Plus seeded corpora of near copies.
import { decodeUtf8ToString } from '../utf8.js';
import { randomDocument, referenceFingerprint, referenceShingleHash, rng, shingleWords } from '../reference.js';
import { bruteForce, unionFind } from '../join/join-reference.js';

const refSets = new Map<string, Set<bigint>>();
export function refSet(text: string | Uint8Array, width = 3): Set<bigint> {
  const s = typeof text === 'string' ? text : decodeUtf8ToString(text);
  const key = `${width}:${s}`;
  let set = refSets.get(key);
  if (!set) refSets.set(key, (set = new Set(shingleWords(s, width).map((w) => referenceShingleHash(w, 64)))));
  return set;
}

/**
 * The verifier's set of a text, by its definition (docs/api.md): the top 32 bits of each 64-bit shingle hash, so
 * two shingles whose hashes share them count as one.
 */
const verifierSets = new Map<string, Set<number>>();
export function refVerifierSet(text: string | Uint8Array, width = 3): Set<number> {
  const s = typeof text === 'string' ? text : decodeUtf8ToString(text);
  const key = `${width}:${s}`;
  let set = verifierSets.get(key);
  if (!set) verifierSets.set(key, (set = new Set([...refSet(s, width)].map((h) => Number(h >> 32n)))));
  return set;
}

/** [common, union] of the two texts' verifier sets. */
export function refCounts(x: string | Uint8Array, y: string | Uint8Array, width = 3): [number, number] {
  const a = refVerifierSet(x, width);
  const b = refVerifierSet(y, width);
  let common = 0;
  for (const h of a) if (b.has(h)) common++;
  return [common, a.size + b.size - common];
}

const decoder = new TextDecoder();
const plain = (t: string | Uint8Array) => (typeof t === 'string' ? t : decoder.decode(t));

/** The verification rule, from the reference: J ≥ t, or both wordless and identical once trimmed. */
export function refKeep(x: string | Uint8Array, y: string | Uint8Array, width: number, t: number): boolean {
  const a = refVerifierSet(x, width);
  const b = refVerifierSet(y, width);
  if (a.size === 0 || b.size === 0) return a.size === 0 && b.size === 0 && plain(x).trim() === plain(y).trim();
  const [common, union] = refCounts(x, y, width);
  return common / union >= t;
}

/** Documents in families: a random multilingual base, and variants with a few pieces changed, dropped or added. */
export function families(seed: number, count: number, maxPieces: number): string[] {
  const next = rng(seed);
  const out: string[] = [];
  while (out.length < count) {
    const base = randomDocument(next, maxPieces);
    out.push(base);
    const variants = Math.floor(next() * 4);
    for (let v = 0; v < variants && out.length < count; v++) {
      const words = base.split(' ');
      const edits = Math.floor(next() * 3);
      for (let e = 0; e < edits && words.length > 0; e++) {
        const at = Math.floor(next() * words.length);
        const r = next();
        if (r < 0.4) words[at] = randomDocument(next, 2);
        else if (r < 0.7) words.splice(at, 1);
        else words.splice(at, 0, randomDocument(next, 2));
      }
      out.push(words.join(' '));
    }
  }
  return out;
}

/**
 * dedup()'s clusters by their definition, at its defaults: every pair of 64-bit reference fingerprints within k,
 * kept by refKeep (3-word shingles, Jaccard ≥ 0.6), joined into connected clusters (each document's cluster is its
 * smallest index).
 */
export function referenceClusters(texts: readonly string[], k = 12): number[] {
  const fps = BigUint64Array.from(texts, (t) => referenceFingerprint(t, { bits: 64 }));
  const kept = bruteForce(fps, k, 64).filter((pair) => {
    const [a, b] = pair.split(',').map(Number) as [number, number];
    return refKeep(texts[a]!, texts[b]!, 3, 0.6);
  });
  return unionFind(texts.length, kept);
}
