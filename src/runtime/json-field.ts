// JSON Lines records read for their text field in WebAssembly (assembly/json-field.ts), a chunk of lines per call:
// for the CLI's --jsonl, where JSON.parse, the UTF-16 string it builds and encodeInto back to UTF-8 took most of the
// calling thread while the hashing workers waited (2 GB of JSON Lines: parseLine, Buffer.toString, encodeInto and
// their garbage about 8.8 s of 13 s). A record is settled here only when the kernel gives exactly what
// JSON.parse and encodeInto would; any other (invalid, unusual) is left to JSON.parse by the caller.
import { Region, type Heap } from './heap.js';
import { wasm } from './wasm.js';

interface JsonFieldKernels {
  jsonFields(
    buf: number,
    lines: number,
    count: number,
    key: number,
    keyLen: number,
    idKey: number,
    idKeyLen: number,
    dst: number,
    out: number,
    stack: number,
    depth: number,
    valid: number,
  ): number;
}

/** Words per line in the kernel's output: status, text offset, text length, id offset, id length. */
const OUT_WORDS = 5;
/** Nesting the kernel follows; a deeper record goes to JSON.parse. */
const MAX_DEPTH = 1024;
const encoder = new TextEncoder();

/** What the kernel says of a record's id (see JsonFields.idKind). @internal */
export const ID_NONE = 0;
/** @internal */
export const ID_PLAIN = 1;
/** @internal */
export const ID_PARSE = 2;

/**
 * One call's records, by line: `texts[q]` is line q's text, written over the start of the line in the caller's
 * buffer (no longer than the line; the other lines are untouched), or null where the line is left to JSON.parse.
 * For a settled line, `idKinds[q]` says what its id is (ID_NONE; ID_PLAIN, a JSON string without escapes, which is
 * its own JSON.stringify; or ID_PARSE, a token to JSON.parse) and `idTokens[q]` is that token.
 * @internal
 */
export interface JsonFields {
  texts: Array<Uint8Array | null>;
  idKinds: Uint8Array;
  idTokens: Array<string | undefined>;
}

const regionsByHeap = new WeakMap<Heap, Region>();
const decoder = new TextDecoder();

/**
 * Reads lines of `bytes` (line q spans lines[2q] .. lines[2q + 1]) for the string at top-level key `field` and the
 * value at `idField` ('' for none). Each settled line's text is written back over the start of that line in `bytes`
 * (its id token read first), and a line left to JSON.parse keeps its bytes: no buffer is allocated per call.
 * `utf8Valid`: the caller has checked that the lines are well-formed UTF-8 (Node's `buffer.isUtf8`), so the kernel
 * need not check each byte above 0x7f; a wrong `true` gives texts that JSON.parse would not.
 * @internal
 */
export function readJsonFields(
  bytes: Uint8Array,
  lines: Uint32Array,
  count: number,
  field: string,
  idField: string,
  utf8Valid = false,
): JsonFields {
  const rt = wasm();
  let region = regionsByHeap.get(rt.heap);
  if (!region) {
    region = new Region(rt.heap);
    regionsByHeap.set(rt.heap, region);
  }
  const key = encoder.encode(field);
  const idKey = encoder.encode(idField);
  // The texts' room: no longer than their lines, and 16 bytes the kernel may store past the last.
  const [buf, linesAt, keyAt, idAt, dst, out, stack] = region.reserveParts([
    ...[bytes.length, count * 8, key.length, idKey.length],
    ...[bytes.length + 16, count * OUT_WORDS * 4, MAX_DEPTH],
  ]) as [number, number, number, number, number, number, number];
  const u8 = rt.heap.u8;
  u8.set(bytes, buf);
  u8.set(key, keyAt);
  u8.set(idKey, idAt);
  rt.heap.u32.set(lines.subarray(0, 2 * count), linesAt >>> 2);
  const k = rt.kernels as unknown as JsonFieldKernels;
  k.jsonFields(
    buf,
    linesAt,
    count,
    keyAt,
    key.length,
    idAt,
    idKey.length,
    dst,
    out,
    stack,
    MAX_DEPTH,
    utf8Valid ? 1 : 0,
  );
  const heap = rt.heap.u8;
  const words = rt.heap.u32.subarray(out >>> 2, (out >>> 2) + count * OUT_WORDS);
  const texts = new Array<Uint8Array | null>(count).fill(null);
  const idKinds = new Uint8Array(count);
  const idTokens = new Array<string | undefined>(count);
  for (let q = 0; q < count; q++) {
    const w = q * OUT_WORDS;
    if ((words[w]! & 0xffff) !== 0) continue;
    const start = lines[2 * q]!;
    const kind = words[w]! >>> 16;
    idKinds[q] = kind;
    if (kind !== ID_NONE) {
      const id = buf + start + words[w + 3]!;
      idTokens[q] = decoder.decode(heap.subarray(id, id + words[w + 4]!));
    }
    const from = dst + words[w + 1]!;
    const length = words[w + 2]!;
    bytes.set(heap.subarray(from, from + length), start);
    texts[q] = bytes.subarray(start, start + length);
  }
  return { texts, idKinds, idTokens };
}
