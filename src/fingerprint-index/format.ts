// The binary format of a FingerprintIndex (little-endian). Only the live data is stored — options, ids and
// fingerprints — not the tables: loading re-plans for the loading build and rebuilds them, so a file never
// depends on a layout version and a damaged file can never point a kernel outside its memory.
//
//   offset  size  field
//   0       4     magic "SHFI"
//   4       2     format version (2; version 1 is still read)
//   6       2     flags (0)
//   8       8     total length in bytes, checksum included
//   16      1     bits (64 or 128)
//   17      1     maxDistance
//   18      1     id kind (1 u32 numbers, 2 strings)
//   19      1     layout (0 planned, 1 linear, 2 forced tables)
//   20      1     layout blocks     21  1  layout leading blocks
//   22      1     directory bits (255: planned)     23  1  tail bits (0: planned)
//   24      8     bytesPerFingerprint budget (f64; 0: default)
//   32      4     count N
//   36      2     spec id length L, then L bytes of the spec id (ASCII: one of SPEC_IDS), zero padding to a
//                 multiple of 8: the fingerprint spec the index holds fingerprints of
//   ...           N fingerprints (1 or 2 u64 words each, low word first), ascending by id key
//   ...           ids: N u32 (ascending), or N strings: u32 length in UTF-16 code units, then the code units
//                 (u16 each), so that any JavaScript string, lone surrogates included, comes back unchanged
//   end − 8 8     XXH64 (seed 0) of every byte before it
//
// Version 1 differed only in the strings: u32 UTF-8 length + UTF-8 bytes (lone surrogates became U+FFFD).
import { SPEC_IDS, type SpecId } from '../fingerprint/spec.js';
import type { IndexBits, IndexLayout } from './planner.js';
import { show } from '../errors.js';

export const FORMAT_VERSION = 2;
/** Versions this build reads. */
const READABLE = [1, 2];
const MAGIC = [0x53, 0x48, 0x46, 0x49]; // "SHFI"
const FIXED = 38;

export interface IndexData {
  readonly spec: SpecId;
  readonly bits: IndexBits;
  readonly maxDistance: number;
  readonly layout: IndexLayout | undefined;
  readonly bytesPerFingerprint: number | undefined;
  readonly idKind: 'number' | 'string';
  readonly ids: Uint32Array | ReadonlyArray<string | number>;
  readonly fingerprints: BigUint64Array;
}

/**
 * The checksum function (XXH64, seed 0), or null for a hand-over between threads of one process
 * (FingerprintIndex.queryManyAsync): its checksum field stays 0 and is not checked, since the bytes never leave
 * memory and hashing 100 MB would stall the calling thread.
 */
export type Checksum = ((bytes: Uint8Array) => bigint) | null;

/** Where encodeIndex writes: a new zeroed Uint8Array of `size` bytes (a SharedArrayBuffer's, for a hand-over). */
export type Allocate = (size: number) => Uint8Array;

function pad8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

export function encodeIndex(
  data: IndexData,
  checksum: Checksum,
  allocate: Allocate = (size) => new Uint8Array(size),
): Uint8Array {
  const encoder = new TextEncoder();
  const n = data.ids.length;
  const spec = encoder.encode(data.spec);
  const head = pad8(FIXED + spec.length);
  const fpBytes = data.fingerprints.length * 8;
  let idBytes: Uint8Array;
  if (data.idKind === 'number') {
    const ids = data.ids instanceof Uint32Array ? data.ids : Uint32Array.from(data.ids as ArrayLike<number>);
    idBytes = new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength);
  } else {
    const ids = data.ids as readonly string[];
    let size = 0;
    for (const s of ids) size += 4 + 2 * s.length;
    idBytes = new Uint8Array(size);
    const view = new DataView(idBytes.buffer);
    const units = new Uint16Array(idBytes.buffer, 0, size >>> 1); // every length and unit starts at an even offset
    let at = 0;
    for (const s of ids) {
      view.setUint32(at, s.length, true);
      const from = (at + 4) >>> 1;
      for (let j = 0; j < s.length; j++) units[from + j] = s.charCodeAt(j);
      at += 4 + 2 * s.length;
    }
    if (!littleEndian) for (let i = 0; i < units.length; i++) view.setUint16(2 * i, units[i]!, true);
  }
  const total = head + fpBytes + idBytes.length + 8;
  const out = allocate(total);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  out.set(MAGIC, 0);
  view.setUint16(4, FORMAT_VERSION, true);
  view.setUint16(6, 0, true);
  view.setBigUint64(8, BigInt(total), true);
  view.setUint8(16, data.bits);
  view.setUint8(17, data.maxDistance);
  view.setUint8(18, data.idKind === 'number' ? 1 : 2);
  const layout = data.layout;
  if (layout === undefined) view.setUint8(19, 0);
  else if (layout === 'linear') view.setUint8(19, 1);
  else {
    view.setUint8(19, 2);
    view.setUint8(20, layout.blocks);
    view.setUint8(21, layout.leading);
    view.setUint8(22, layout.directoryBits ?? 255);
    view.setUint8(23, layout.tailBits ?? 0);
  }
  view.setFloat64(24, data.bytesPerFingerprint ?? 0, true);
  view.setUint32(32, n, true);
  view.setUint16(36, spec.length, true);
  out.set(spec, FIXED);
  out.set(new Uint8Array(data.fingerprints.buffer, data.fingerprints.byteOffset, fpBytes), head);
  out.set(idBytes, head + fpBytes);
  if (checksum) view.setBigUint64(total - 8, checksum(out.subarray(0, total - 8)), true);
  return out;
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The string of `len` UTF-16 code units at `at` (little-endian), taken unit by unit: no decoder repairs them. */
function codeUnits(view: DataView, at: number, len: number): string {
  let out = '';
  for (let done = 0; done < len; ) {
    const chunk = Math.min(len - done, 4096);
    const units = new Array<number>(chunk);
    for (let j = 0; j < chunk; j++) units[j] = view.getUint16(at + 2 * (done + j), true);
    out += String.fromCharCode(...units);
    done += chunk;
  }
  return out;
}

function invalid(reason: string): RangeError {
  return new RangeError(`invalid index bytes: ${reason}`);
}

/**
 * Whether offset `at` of `bytes` is a multiple of `size` in its buffer, so that decodeIndex can read the
 * fingerprints and ids in place (views of `bytes`, valid as long as it is) instead of copying them (120 MB at
 * 10^7 fingerprints: 0.1-0.4 s of fresh pages).
 */
function aligned(bytes: Uint8Array, at: number, size: number): boolean {
  return (bytes.byteOffset + at) % size === 0;
}

/** Decodes and checks everything; throws RangeError ("invalid index bytes: …") on any inconsistency. */
export function decodeIndex(bytes: Uint8Array, checksum: Checksum): IndexData {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
  if (bytes.length < 16) throw invalid(`truncated: ${bytes.length} bytes is shorter than the header`);
  for (let i = 0; i < 4; i++) {
    if (bytes[i] !== MAGIC[i]) throw invalid('not a simhash-wasm index (bad magic)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint16(4, true);
  if (!READABLE.includes(version))
    throw invalid(`format version ${version} is not supported (this build reads versions ${READABLE.join(' and ')})`);
  const total = view.getBigUint64(8, true);
  if (total > BigInt(bytes.length))
    throw invalid(`truncated: the header announces ${total} bytes, got ${bytes.length}`);
  if (total < BigInt(bytes.length))
    throw invalid(`${BigInt(bytes.length) - total} unexpected bytes after the end (${total} bytes announced)`);
  if (bytes.length < FIXED + 8) throw invalid(`truncated: ${bytes.length} bytes is shorter than the header`);
  const stored = view.getBigUint64(bytes.length - 8, true);
  if (checksum && checksum(bytes.subarray(0, bytes.length - 8)) !== stored)
    throw invalid('checksum mismatch (the bytes were altered or damaged)');
  // The checksum matched: what follows guards against files written by something else than serialize().
  if (view.getUint16(6, true) !== 0) throw invalid(`unknown flags ${view.getUint16(6, true)}`);
  const bits = view.getUint8(16);
  if (bits !== 64 && bits !== 128) throw invalid(`bits ${bits} is not 64 or 128`);
  const maxDistance = view.getUint8(17);
  if (maxDistance > bits) throw invalid(`maxDistance ${maxDistance} exceeds ${bits} bits`);
  const kindByte = view.getUint8(18);
  if (kindByte !== 1 && kindByte !== 2) throw invalid(`unknown id kind ${kindByte}`);
  const layoutByte = view.getUint8(19);
  let layout: IndexLayout | undefined;
  if (layoutByte === 1) layout = 'linear';
  else if (layoutByte === 2) {
    const d = view.getUint8(22);
    const t = view.getUint8(23);
    layout = {
      blocks: view.getUint8(20),
      leading: view.getUint8(21),
      ...(d !== 255 ? { directoryBits: d } : {}),
      ...(t !== 0 ? { tailBits: t as 16 | 32 } : {}),
    };
  } else if (layoutByte !== 0) throw invalid(`unknown layout ${layoutByte}`);
  const budget = view.getFloat64(24, true);
  const n = view.getUint32(32, true);
  const specLength = view.getUint16(36, true);
  const head = pad8(FIXED + specLength);
  if (head > bytes.length - 8) throw invalid('spec id runs past the end');
  // A copy: browsers' TextDecoder refuses views of a SharedArrayBuffer (a hand-over's).
  const spec = new TextDecoder().decode(bytes.slice(FIXED, FIXED + specLength));
  if (!(SPEC_IDS as readonly string[]).includes(spec))
    throw invalid(
      `the index was written for fingerprint spec ${show(spec)}, this build implements ${SPEC_IDS.map((id) => show(id)).join(' and ')}`,
    );
  const words = bits / 64;
  const fpEnd = head + n * words * 8;
  if (fpEnd > bytes.length - 8) throw invalid(`${n} fingerprints run past the end`);
  const fingerprints = aligned(bytes, head, 8)
    ? new BigUint64Array(bytes.buffer, bytes.byteOffset + head, n * words)
    : new BigUint64Array(n * words);
  if (fingerprints.buffer !== bytes.buffer) new Uint8Array(fingerprints.buffer).set(bytes.subarray(head, fpEnd));
  let ids: Uint32Array | string[];
  let end: number;
  if (kindByte === 1) {
    end = fpEnd + n * 4;
    if (end > bytes.length - 8) throw invalid(`${n} ids run past the end`);
    ids = aligned(bytes, fpEnd, 4) ? new Uint32Array(bytes.buffer, bytes.byteOffset + fpEnd, n) : new Uint32Array(n);
    if (ids.buffer !== bytes.buffer) new Uint8Array(ids.buffer).set(bytes.subarray(fpEnd, end));
    for (let i = 1; i < n; i++) if (ids[i]! <= ids[i - 1]!) throw invalid(`ids are not strictly ascending at ${i}`);
  } else if (version >= 2) {
    ids = new Array<string>(n);
    let at = fpEnd;
    for (let i = 0; i < n; i++) {
      if (at + 4 > bytes.length - 8) throw invalid(`string id ${i} runs past the end`);
      const len = view.getUint32(at, true);
      if (at + 4 + 2 * len > bytes.length - 8) throw invalid(`string id ${i} runs past the end`);
      ids[i] = codeUnits(view, at + 4, len);
      at += 4 + 2 * len;
    }
    end = at;
  } else {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    ids = new Array<string>(n);
    let at = fpEnd;
    for (let i = 0; i < n; i++) {
      if (at + 4 > bytes.length - 8) throw invalid(`string id ${i} runs past the end`);
      const len = view.getUint32(at, true);
      if (at + 4 + len > bytes.length - 8) throw invalid(`string id ${i} runs past the end`);
      try {
        ids[i] = decoder.decode(bytes.subarray(at + 4, at + 4 + len));
      } catch {
        throw invalid(`string id ${i} is not valid UTF-8`);
      }
      at += 4 + len;
    }
    end = at;
  }
  if (end !== bytes.length - 8) throw invalid(`${bytes.length - 8 - end} unexpected bytes before the checksum`);
  return {
    spec: spec as SpecId,
    bits,
    maxDistance,
    layout,
    bytesPerFingerprint: budget === 0 ? undefined : budget,
    idKind: kindByte === 1 ? 'number' : 'string',
    ids,
    fingerprints,
  };
}
