// Texts packed for postMessage to a pool worker (pool.ts): strings stay strings, byte texts lie back to back in
// one transferable buffer, so a batch crosses in one copy whatever its number of documents.
/** Texts packed for postMessage: strings stay strings (null marks a byte text), bytes lie in one buffer. */
export interface PackedTexts {
  strings: Array<string | null> | null;
  bytes: Uint8Array;
  /** Start of each byte text in `bytes`, plus the end of the last one. */
  offsets: Uint32Array;
}

export function packTexts(texts: ReadonlyArray<string | Uint8Array>): PackedTexts {
  let total = 0;
  let count = 0;
  for (const t of texts)
    if (typeof t !== 'string') {
      total += t.length;
      count++;
    }
  const bytes = new Uint8Array(total);
  const offsets = new Uint32Array(count + 1);
  const strings: Array<string | null> | null = count === texts.length ? null : new Array(texts.length);
  let at = 0;
  let k = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    if (typeof t === 'string') {
      strings![i] = t;
      continue;
    }
    if (strings) strings[i] = null;
    bytes.set(t, at);
    at += t.length;
    offsets[++k] = at;
  }
  return { strings, bytes, offsets };
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
