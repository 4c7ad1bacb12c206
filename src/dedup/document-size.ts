// The largest document dedup takes, checked before anything is hashed: one that fits where the fingerprint fits
// (MAX_DOCUMENT_BYTES) can still fail half-way through a run while its shingle set is built, after minutes of work
// and naming no document, unless it is refused here.
import { MAX_DOCUMENT_BYTES, utf8Length } from '../fingerprint/fingerprint.js';
import type { VerifyOptions } from './verify-pairs.js';

/**
 * The largest document, in UTF-8 bytes, that dedup, dedupStream and Deduplicator verify (64 MiB). The set builder
 * (assembly/verify-pairs.ts, buildShingleSets) starts a document only with room for an 8-byte hash per byte of it
 * (its shingles' 64-bit hashes, then in place their 4-byte halves and the sort's scratch), beside its UTF-8 and the
 * tokenizer's scratch of twice that: 11 bytes of WebAssembly memory per byte, whatever the text (19 when the room
 * was two 8-byte words per byte). A 200 MiB document failed with "cannot allocate 3355443232 bytes" (16 per byte
 * then). Measured at this size with 19 per byte, in one dedup() call: one document 1.19 GiB at the peak, three
 * 1.45 GiB; two of random CJK characters (all-distinct shingles, sets larger than the builder's estimate, so its
 * room grows with the old block alive) 2.65 GiB. At 128 MiB that last case would have passed 4 GiB.
 */
export const MAX_VERIFIED_DOCUMENT_BYTES = 64 << 20;

/**
 * Throws a RangeError naming `name` and its size when `text` is larger than dedup can take: MAX_VERIFIED_DOCUMENT_BYTES
 * under verification, else MAX_DOCUMENT_BYTES. The text's type is checked already.
 */
export function checkDocumentSize(text: string | Uint8Array, name: string, verified: boolean): void {
  const limit = verified ? MAX_VERIFIED_DOCUMENT_BYTES : MAX_DOCUMENT_BYTES;
  // A UTF-16 unit is one to three bytes of UTF-8: count exactly only when that could decide.
  if (typeof text === 'string' && text.length * 3 <= limit) return;
  const bytes = typeof text === 'string' ? (text.length > limit ? text.length : utf8Length(text)) : text.byteLength;
  if (bytes <= limit) return;
  const size = typeof text === 'string' && bytes === text.length ? `at least ${bytes}` : `${bytes}`;
  if (verified) {
    throw new RangeError(
      `${name} has ${size} bytes of UTF-8, more than the ${limit} (64 MiB, MAX_VERIFIED_DOCUMENT_BYTES) that dedup ` +
        'can verify: building its shingle set takes about 11 bytes of WebAssembly memory per byte. With verify: ' +
        `false a document may have up to ${MAX_DOCUMENT_BYTES} (1 GiB, MAX_DOCUMENT_BYTES)`,
    );
  }
  throw new RangeError(
    `${name} has ${size} bytes of UTF-8; one document may have at most ${limit} (1 GiB, MAX_DOCUMENT_BYTES)`,
  );
}

/**
 * checkDocumentSize for every text of a dedup() or Deduplicator.add() batch, before any hashing: text i named
 * name(i) (texts[i] by default).
 */
export function checkDocumentSizes(
  texts: readonly (string | Uint8Array)[],
  verify: VerifyOptions | false,
  name: (i: number) => string = (i) => `texts[${i}]`,
): void {
  for (let i = 0; i < texts.length; i++) checkDocumentSize(texts[i]!, name(i), verify !== false);
}
