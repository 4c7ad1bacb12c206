// Texts packed for postMessage to a pool worker (pool.ts): strings stay strings, byte texts lie back to back in
// one transferable buffer, so a batch crosses in one copy whatever its number of documents.
import { spareBuffer } from './spare-buffers.js';

/** Texts packed for postMessage: strings stay strings (null marks a byte text), bytes lie in one buffer. */
export interface PackedTexts {
  strings: Array<string | null> | null;
  bytes: Uint8Array;
  /** Start of each byte text in `bytes`, plus the end of the last one. */
  offsets: Uint32Array;
}

const encoder = new TextEncoder();

/**
 * Packs texts for a worker. With `utf8`, strings are encoded into the byte buffer too (the worker then reads
 * bytes, which hash exactly as their strings do): one transfer instead of a structured clone of every string,
 * which costs about as much as the encoding the worker then no longer does.
 */
export function packTexts(texts: ReadonlyArray<string | Uint8Array>, utf8 = false): PackedTexts {
  let remaining = 0; // bytes still to write, counting a string's units (exact for ASCII, a lower bound otherwise)
  let count = 0;
  for (const t of texts)
    if (utf8 || typeof t !== 'string') {
      remaining += t.length;
      count++;
    }
  // Room for some multi-byte characters: growing copies what is written so far.
  let bytes = new Uint8Array(spareBuffer(utf8 ? remaining + (remaining >>> 4) + 64 : remaining));
  const offsets = new Uint32Array(count + 1);
  const strings: Array<string | null> | null = count === texts.length ? null : new Array(texts.length);
  let at = 0;
  let k = 0;
  const room = (needed: number): void => {
    if (at + needed <= bytes.length) return;
    const grown = new Uint8Array(Math.max(at + needed, bytes.length + (bytes.length >>> 1)));
    grown.set(bytes.subarray(0, at));
    bytes = grown;
  };
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    if (typeof t === 'string' && !utf8) {
      strings![i] = t;
      continue;
    }
    if (strings) strings[i] = null;
    remaining -= t.length;
    if (typeof t === 'string') {
      let rest = t;
      for (;;) {
        const { read, written } = encoder.encodeInto(rest, bytes.subarray(at));
        at += written;
        if (read === rest.length) break;
        rest = rest.slice(read);
        room(rest.length * 3 + remaining); // each UTF-16 unit left becomes at most 3 bytes
      }
    } else {
      room(t.length + remaining);
      bytes.set(t, at);
      at += t.length;
    }
    offsets[++k] = at;
  }
  return { strings, bytes: bytes.subarray(0, at), offsets };
}

export function unpackTexts(packed: PackedTexts): Array<string | Uint8Array> {
  const { strings, bytes, offsets } = packed;
  const views = (i: number) => bytes.subarray(offsets[i], offsets[i + 1]);
  if (!strings) return Array.from({ length: offsets.length - 1 }, (_, i) => views(i));
  let k = 0;
  return strings.map((s) => (s === null ? views(k++) : s));
}

export function transferOf(packed: PackedTexts): ArrayBuffer[] {
  return [packed.bytes.buffer as ArrayBuffer];
}
