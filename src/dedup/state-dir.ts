// The Deduplicator's state as a directory (dedup --state DIR), made to be appended to rather than rewritten: one
// immutable segment file per saveTo() holding that run's documents (fingerprints, content keys, flags, set sizes and
// checksums, labels, then the shingle sets), and a small manifest naming the segments with their sizes and checksums
// beside what changes for every document (the root of its cluster, 4 bytes). A run writes its segment (temporary
// file, fsync, rename), then the manifest (temporary file, fsync, rename, fsync of the folder): the manifest's rename
// is the commit, so a run killed at any moment leaves the previous manifest and the segments it names, and the files
// it does not name are removed by the next run that commits. Opening reads the manifest and each segment's metadata,
// checked whole; a shingle set is read only when its document is in a candidate pair, by offset, and checked against
// its own checksum, so a run holds in memory its own sets and no earlier one's. A process appending to the
// directory holds DIR/lock (created exclusively) throughout: two appending at once would each commit a manifest
// without the other's segment, and the later commit would remove that segment as unnamed.
//
// Node only: the file functions take node:fs as an argument (imported lazily by the Deduplicator), so the library
// still loads in browsers.
import type * as FS from 'node:fs';
import type { Runtime } from '../runtime/wasm.js';
import { align16, regions } from '../runtime/marshal.js';
import { contentHashes } from './exact-copies.js';
import type { SetSource } from './pair-checks.js';
import type { SetStore } from './set-store.js';
import { type BuiltSets, SET_HASH_BYTES as HASH, verifyRegions } from './shingle-sets.js';

export type NodeFs = typeof FS;

export const STATE_MAGIC = 'simhash-wasm/state';
const SEGMENT_MAGIC = 'simhash-wasm/state-segment';
/**
 * Version 1: one state.bin holding everything (save()'s bytes). Version 2: a manifest and segments. Version 3: the
 * same, with 4-byte shingle hashes in the sets (SET_HASH_BYTES).
 */
export const DIR_VERSION = 3;
export const MANIFEST = 'manifest.bin';
/** The single-file state of version 1, converted by the first run that commits a directory state. */
export const LEGACY_STATE = 'state.bin';
const SEGMENT_NAME = /^segment-\d+-[0-9a-f]+\.bin$/;
const TEMP_NAME = /^\..*\.tmp$/;

export const pad8 = (x: number): number => (x + 7) & ~7;

/** A checksummed file's trailer: a 128-bit checksum of everything before it, then END (8 bytes with padding). */
export const TRAILER = 24;
const END = 0x53414853; // "SHAS"
/** Bytes hashed per piece: WebAssembly memory holds one window of pieces, never the whole state. */
const PIECE_BYTES = 8 << 20;

/**
 * A 128-bit checksum (integrity, not authenticity): the content hash (exact-copies.ts, in WebAssembly) of each 8 MiB
 * piece, then of those hashes. A CRC-32 in JavaScript took seconds on a 1 GB state. It uses WebAssembly's work
 * region, so never while a verification window's sets are there.
 */
export function checksum(bytes: Uint8Array): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) pieces.push(bytes.subarray(at, at + PIECE_BYTES));
  const each = contentHashes(pieces);
  const all = contentHashes([new Uint8Array(each.buffer, each.byteOffset, each.byteLength)]);
  return new Uint8Array(all.buffer, all.byteOffset, 16).slice();
}

/** Writes the trailer of `out`, whose last TRAILER bytes are for it. */
export function seal(out: Uint8Array): Uint8Array {
  const body = out.length - TRAILER;
  const sum = checksum(out.subarray(0, body));
  out.set(sum, body);
  new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(body + 16, END, true);
  return sum;
}

/** Whether `bytes` ends with a trailer that matches the rest. */
export function sealed(bytes: Uint8Array): boolean {
  if (bytes.length < TRAILER) return false;
  const body = bytes.length - TRAILER;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(body + 16, true) !== END) return false;
  const sum = checksum(bytes.subarray(0, body));
  return sum.every((b, i) => b === bytes[body + i]);
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * A 64-bit checksum of one shingle set (two u32 lanes), in JavaScript: sets are checked as they are read into a
 * verification window, where WebAssembly's work region is taken.
 */
export function setChecksum(u32: Uint32Array, from: number, to: number): [number, number] {
  // Four lanes, each an odd multiply after an xor (a bijection per word, so a changed word always changes its lane),
  // independent so that they overlap: 57 MB of sets in 34 ms with two dependent lanes, in about half that with four.
  let h0 = 0x9e3779b9 ^ (to - from);
  let h1 = 0x85ebca6b;
  let h2 = 0xc2b2ae35;
  let h3 = 0x27d4eb2f;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    h0 = Math.imul(h0 ^ u32[i]!, 0x01000193);
    h1 = Math.imul(h1 ^ u32[i + 1]!, 0x5bd1e995);
    h2 = Math.imul(h2 ^ u32[i + 2]!, 0x01000193);
    h3 = Math.imul(h3 ^ u32[i + 3]!, 0x5bd1e995);
  }
  for (; i < to; i++) h0 = Math.imul(h0 ^ u32[i]!, 0x01000193);
  let a = h0 ^ ((h2 << 16) | (h2 >>> 16));
  let b = h1 ^ ((h3 << 16) | (h3 >>> 16));
  a ^= a >>> 16;
  a = Math.imul(a, 0x7feb352d);
  b ^= b >>> 15;
  b = Math.imul(b, 0x846ca68b);
  a ^= Math.imul(b, 0x9e3779b1);
  return [(a ^ (a >>> 15)) >>> 0, (b ^ (b >>> 16)) >>> 0];
}

/** A header: u32 length, u32 version, then JSON, padded to 8 bytes. */
function header(json: object, version: number): Uint8Array {
  const text = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(pad8(8 + text.length));
  const view = new DataView(out.buffer);
  view.setUint32(0, text.length, true);
  view.setUint32(4, version, true);
  out.set(text, 8);
  return out;
}

export class StateError extends RangeError {}
const fail = (why: string) => new StateError(`not a usable Deduplicator state: ${why}`);

/** Checks a header's magic, version and options; returns its JSON. */
function readHeader(
  bytes: Uint8Array,
  what: string,
  magic: string,
  signature: Record<string, unknown>,
): Record<string, unknown> & { headerBytes: number } {
  if (bytes.length < 8) throw fail(`${what} is ${bytes.length} bytes (truncated)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(0, true);
  const version = view.getUint32(4, true);
  if (8 + length > bytes.length) throw fail(`${what}: truncated header`);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + length)));
  } catch {
    throw fail(`${what}: its header is not JSON`);
  }
  if (json.magic !== magic) throw fail(`${what} is not a simhash-wasm state`);
  if (json.version === 2 && version === 2)
    throw fail(
      `${what} is version 2, with 8-byte shingle hashes; this library reads version ${DIR_VERSION} (4-byte ones): ` +
        'remove the folder and run over the corpus again to rebuild it',
    );
  if (version !== DIR_VERSION || json.version !== DIR_VERSION)
    throw fail(`${what} is version ${String(json.version)}, this library reads version ${DIR_VERSION}`);
  checkSignature(json.options as Record<string, unknown> | undefined, signature);
  return { ...json, headerBytes: pad8(8 + length) };
}

/**
 * The options in the order their differences are named: the one that makes every other moot first (another width
 * or no shingle sets makes fingerprints or pairs incomparable whatever k is), k and the threshold last.
 */
const SIGNATURE_ORDER = [
  'bits',
  'threshold',
  'preset',
  'tokenizer',
  'spec',
  'width',
  'normalize',
  'locale',
  'shingleWidth',
  'k',
];

const shown = (value: unknown): string =>
  value === null || value === undefined ? 'the default (none)' : JSON.stringify(value);

/** One difference between a state's options and these, in words (after "the state was made "). */
function difference(key: string, theirs: unknown, mine: unknown): string {
  if (key === 'bits') return `with ${String(theirs)}-bit fingerprints, not ${String(mine)}`;
  if (key === 'threshold' && theirs === false)
    return `without verification (--no-verify), not with it (threshold ${String(mine)})`;
  if (key === 'threshold' && mine === false)
    return `with verification (threshold ${String(theirs)}), not without it (--no-verify)`;
  return `with ${key} = ${shown(theirs)}, not ${shown(mine)}`;
}

/** Refuses a state made with other options, naming the most fundamental difference. */
export function checkSignature(theirs: Record<string, unknown> | undefined, mine: Record<string, unknown>): void {
  const keys = [
    ...SIGNATURE_ORDER.filter((k) => k in mine),
    ...Object.keys(mine).filter((k) => !SIGNATURE_ORDER.includes(k)),
  ];
  for (const key of keys) {
    const value = theirs?.[key];
    if (JSON.stringify(value) !== JSON.stringify(mine[key]))
      throw new StateError(
        `the state was made ${difference(key, value, mine[key])}: use the same options, or start a new state`,
      );
  }
}

/** The lock file of a directory state: JSON naming the process that holds it and its host. */
export const LOCK = 'lock';

/** The process whose lock on a state directory was taken over: it held the lock and is gone. */
export interface StaleLock {
  /** Its process id. */
  pid: number;
  /** The host it ran on (this one: a lock of another host is never taken over). */
  host: string;
}

/** A directory state's lock, held from open() (or a first saveTo) until close(). */
export interface StateLock {
  /** The holder of a stale lock that was taken over (its process is gone), or null. */
  readonly tookOver: StaleLock | null;
  release(): void;
}

/** Locks held by this process, released when it exits (also on the signals atomic-file.ts ends it with). */
const held = new Set<() => void>();
let exitHook = false;

function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const release of held) release();
  });
  // Without a listener these signals end the process without 'exit'. A listener removes that default, so this one
  // restores it only when it is alone: another listener (the application's, or atomic-file.ts's, which exits with
  // the same codes) decides, and its exit releases the locks.
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(code);
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Creates `file` with `content`, or fails with EEXIST. The content is written whole to `draft` beside it and linked
 * to its name (atomic, and refused when the name exists), so a run killed at any moment leaves no lock or a whole
 * one: created empty and then written (O_EXCL), a run killed in between left an empty lock that every later run
 * refused as not this library's. Where the file system has no hard links, O_EXCL as before.
 */
function createLock(fs: NodeFs, file: string, draft: string, content: string): void {
  fs.writeFileSync(draft, content, { mode: 0o644 });
  try {
    fs.linkSync(draft, file);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || !['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK'].includes(code ?? '')) throw error;
  } finally {
    fs.rmSync(draft, { force: true });
  }
  const fd = fs.openSync(file, 'wx', 0o644);
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/** How old a lock's draft or set-aside copy naming another host must be, its process gone, before it is removed. */
const LEFTOVER_MS = 60_000;

/**
 * Lock drafts and set-aside locks (.lock.PID.NONCE.new / .tmp) of runs killed before they removed them: removed
 * when their process is gone, at once when they name this host (both hold a lock's JSON), else once a minute old.
 */
function removeLeftovers(fs: NodeFs, dir: string, host: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^\.lock\.(\d+)\.[0-9a-f]+\.(?:new|tmp)$/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const f = `${dir}/${name}`;
    try {
      let here = false;
      try {
        here = (JSON.parse(fs.readFileSync(f, 'utf8')) as { host?: unknown }).host === host;
      } catch {
        // not whole: judged by its age
      }
      if (here || Date.now() - fs.statSync(f).mtimeMs > LEFTOVER_MS) fs.rmSync(f, { force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * Takes `dir`'s lock: creates DIR/lock exclusively (createLock) with this process's pid and host, which also proves
 * the directory writable before any work. A lock left by a process of this host that is gone is taken over; one whose
 * process is alive, or that another host holds (whose processes cannot be asked), is refused naming it.
 */
export function lockState(fs: NodeFs, dir: string, host: string): StateLock {
  const file = `${dir}/${LOCK}`;
  const nonce = Math.random().toString(16).slice(2, 10);
  const content = `${JSON.stringify({ pid: process.pid, host, nonce })}\n`;
  let tookOver: StaleLock | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      createLock(fs, file, `${dir}/.${LOCK}.${process.pid}.${nonce}.new`, content);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' || attempt >= 3)
        throw new StateError(
          `the state directory cannot be written: its lock ${file} cannot be created (${code ?? (error as Error).message})`,
        );
    }
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue; // released meanwhile
    }
    let holder: { pid?: unknown; host?: unknown };
    try {
      holder = JSON.parse(text) as typeof holder;
    } catch {
      holder = {};
    }
    const pid = Number(holder.pid);
    const theirHost = typeof holder.host === 'string' ? holder.host : '';
    if (!Number.isInteger(pid) || pid <= 0 || theirHost === '')
      throw new StateError(`${file} is not a lock this library wrote: remove it if no run is using ${dir}`);
    if (theirHost !== host)
      throw new StateError(
        `the state is in use by process ${pid} on host ${theirHost} (${file}): wait for it, or remove ${file} if that run is gone`,
      );
    if (alive(pid))
      throw new StateError(
        `the state is in use by process ${pid}${pid === process.pid ? ' (this one)' : ''} (${file}): wait for it to finish`,
      );
    // A lock whose process is gone: moved aside under a name of our own, then checked to be the one judged stale
    // (another process may have taken it over and locked again in between; that one is put back).
    const aside = `${dir}/.${LOCK}.${process.pid}.${nonce}.tmp`;
    try {
      fs.renameSync(file, aside);
    } catch {
      continue;
    }
    if (fs.readFileSync(aside, 'utf8') !== text) {
      fs.renameSync(aside, file);
      continue;
    }
    fs.rmSync(aside, { force: true });
    tookOver = { pid, host: theirHost };
  }
  removeLeftovers(fs, dir, host);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    held.delete(release);
    try {
      // Only a lock still ours: a stale-lock takeover by another process cannot have happened while we live.
      if (fs.readFileSync(file, 'utf8') === content) fs.rmSync(file, { force: true });
    } catch {
      // Already gone (the directory removed): nothing to release.
    }
  };
  held.add(release);
  hookExit();
  return { tookOver, release };
}

/** One segment as the manifest names it. */
export interface SegmentEntry {
  file: string;
  first: number;
  count: number;
  bytes: number;
  /** Hex of the checksum of the segment's metadata (everything before its sets). */
  meta: string;
}

/** The documents of one segment, as saveTo() hands them over. */
export interface SegmentParts {
  first: number;
  count: number;
  words: number;
  fps: BigUint64Array;
  keys: BigUint64Array;
  wordless: Uint8Array;
  labels: readonly string[];
  /** Document d's set (d from first to first + count - 1). */
  setOf: (d: number) => Uint32Array;
}

const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * Writes `pieces` in order to a temporary file in `dir`, fsyncs it and renames it to `name`: on libuv's threads, so
 * that the calling thread works on meanwhile (the Deduplicator starts a run's segment before it joins).
 */
async function writeDurably(fs: NodeFs, dir: string, name: string, pieces: readonly Uint8Array[]): Promise<number> {
  const path = `${dir}/${name}`;
  const temp = `${dir}/.${name}.${process.pid}.${Math.random().toString(16).slice(2, 10)}.tmp`;
  const call = <T>(f: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => f((error, value) => (error ? reject(error) : resolve(value as T))));
  const fd = await call<number>((done) => fs.open(temp, 'wx', 0o644, done));
  let bytes = 0;
  try {
    for (const piece of pieces) {
      for (let at = 0; at < piece.length; )
        at += await call<number>((done) => fs.write(fd, piece, at, piece.length - at, bytes + at, done));
      bytes += piece.length;
    }
    await call<void>((done) => fs.fsync(fd, done));
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  fs.renameSync(temp, path);
  return bytes;
}

export function syncFolder(fs: NodeFs, dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some file systems (and Windows) cannot fsync a folder; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Writes a segment (temporary file, fsync, rename) and returns its manifest entry. Layout: header, fingerprints,
 * keys (4 words), wordless flags, set sizes (u32), set checksums (2 u32), label offsets (u32, n + 1), labels (UTF-8),
 * each padded to 8 bytes, a trailer over all of that; then the sets, back to back in document order.
 */
export async function writeSegment(
  fs: NodeFs,
  dir: string,
  parts: SegmentParts,
  signature: Record<string, unknown>,
): Promise<SegmentEntry> {
  const { first, count: n, words } = parts;
  const sizes = new Uint32Array(n);
  const sums = new Uint32Array(n * 2);
  let setWords = 0;
  for (let q = 0; q < n; q++) {
    const set = parts.setOf(first + q);
    sizes[q] = set.length;
    setWords += set.length;
    const [a, b] = setChecksum(set, 0, set.length);
    sums[q * 2] = a;
    sums[q * 2 + 1] = b;
  }
  // Labels back to back with their offsets, so that naming one earlier document decodes its label only (a JSON array
  // of 208,163 labels took 50 ms to parse for the few named in a run's output).
  const encoder = new TextEncoder();
  const encoded = parts.labels.map((l) => encoder.encode(l));
  const labelStarts = new Uint32Array(n + 1);
  for (let q = 0; q < n; q++) labelStarts[q + 1] = labelStarts[q]! + encoded[q]!.length;
  const labels = new Uint8Array(labelStarts[n]!);
  encoded.forEach((e, q) => labels.set(e, labelStarts[q]!));
  const head = header(
    {
      magic: SEGMENT_MAGIC,
      version: DIR_VERSION,
      first,
      count: n,
      setWords,
      labelBytes: labels.length,
      options: signature,
    },
    DIR_VERSION,
  );
  const meta = new Uint8Array(metaBytes(head.length, n, words, labels.length));
  let at = 0;
  const put = (bytes: Uint8Array, padded = bytes.length) => {
    meta.set(bytes, at);
    at += padded;
  };
  put(head);
  put(asBytes(parts.fps));
  put(asBytes(parts.keys));
  put(parts.wordless, pad8(n));
  put(asBytes(sizes), pad8(n * 4));
  put(asBytes(sums));
  put(asBytes(labelStarts), pad8((n + 1) * 4));
  put(labels, pad8(labels.length));
  const sum = seal(meta);
  // The sets as they are in memory, adjacent ones (one batch's, in the store) as one view: no copy.
  const pieces: Uint8Array[] = [meta];
  let run: Uint8Array | null = null;
  for (let q = 0; q < n; q++) {
    const set = asBytes(parts.setOf(first + q));
    if (set.length === 0) continue;
    if (run && run.buffer === set.buffer && run.byteOffset + run.length === set.byteOffset) {
      run = new Uint8Array(run.buffer, run.byteOffset, run.length + set.length);
      continue;
    }
    if (run) pieces.push(run);
    run = set;
  }
  if (run) pieces.push(run);
  const file = `segment-${String(first).padStart(10, '0')}-${Math.random().toString(16).slice(2, 10)}.bin`;
  const bytes = await writeDurably(fs, dir, file, pieces);
  return { file, first, count: n, bytes, meta: hex(sum) };
}

function metaBytes(headerBytes: number, n: number, words: number, labelBytes: number): number {
  return (
    headerBytes +
    n * words * 8 +
    n * 32 +
    pad8(n) +
    pad8(n * 4) +
    n * 8 +
    pad8((n + 1) * 4) +
    pad8(labelBytes) +
    TRAILER
  );
}

/**
 * Writes the manifest (the commit point: temporary file, fsync, rename, fsync of the folder), then removes the
 * files of `dir` that it does not name: segments of runs killed before their commit, temporary files, and the
 * version 1 state.bin a first commit converted.
 */
export async function writeManifest(
  fs: NodeFs,
  dir: string,
  count: number,
  segments: readonly SegmentEntry[],
  roots: Uint32Array,
  signature: Record<string, unknown>,
): Promise<void> {
  const head = header({ magic: STATE_MAGIC, version: DIR_VERSION, count, options: signature, segments }, DIR_VERSION);
  const out = new Uint8Array(head.length + pad8(count * 4) + TRAILER);
  out.set(head, 0);
  out.set(asBytes(roots.subarray(0, count)), head.length);
  seal(out);
  await writeDurably(fs, dir, MANIFEST, [out]);
  syncFolder(fs, dir);
  const named = new Set(segments.map((s) => s.file));
  for (const name of fs.readdirSync(dir)) {
    if ((SEGMENT_NAME.test(name) && !named.has(name)) || TEMP_NAME.test(name) || name === LEGACY_STATE)
      fs.rmSync(`${dir}/${name}`, { force: true });
  }
}

/** What open() reads of a directory state: the manifest's counts and roots, and each segment's metadata. */
export interface OpenedState {
  count: number;
  segments: SegmentEntry[];
  roots: Uint32Array;
}

/** Reads and checks the manifest of `dir`; null when there is none. */
export function readManifest(fs: NodeFs, dir: string, signature: Record<string, unknown>): OpenedState | null {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(`${dir}/${MANIFEST}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const h = readHeader(bytes, MANIFEST, STATE_MAGIC, signature);
  const count = Number(h.count);
  const segments = h.segments as SegmentEntry[];
  if (
    !Number.isInteger(count) ||
    !Array.isArray(segments) ||
    h.headerBytes + pad8(count * 4) + TRAILER !== bytes.length
  )
    throw fail(`${MANIFEST} is ${bytes.length} bytes, not what its header says (truncated or damaged)`);
  if (!sealed(bytes)) throw fail(`${MANIFEST}: its checksum does not match (damaged)`);
  let next = 0;
  for (const s of segments) {
    if (typeof s.file !== 'string' || !SEGMENT_NAME.test(s.file) || s.first !== next)
      throw fail(`${MANIFEST} names its segments out of order (damaged)`);
    next += s.count;
  }
  if (next !== count) throw fail(`${MANIFEST}: its segments hold ${next} documents, not ${count}`);
  const roots = Uint32Array.prototype.slice.call(
    new Uint32Array(bytes.buffer, bytes.byteOffset + h.headerBytes, count),
  ) as Uint32Array;
  for (let d = 0; d < count; d++) if (roots[d]! > d) throw fail(`${MANIFEST}: its clusters are damaged`);
  return { count, segments, roots };
}

/** One segment's metadata, read whole and checked. */
export interface SegmentMeta {
  fd: number;
  fps: Uint8Array;
  keys: Uint8Array;
  wordless: Uint8Array;
  sizes: Uint32Array;
  sums: Uint32Array;
  /** Where each label starts in `labels` (n + 1 offsets), and the labels' UTF-8. */
  labelStarts: Uint32Array;
  labels: Uint8Array;
  /** Byte offset of the sets in the file. */
  setsAt: number;
}

function readAt(fs: NodeFs, fd: number, into: Uint8Array, position: number, what: string): void {
  for (let done = 0; done < into.length; ) {
    const got = fs.readSync(fd, into, done, into.length - done, position + done);
    if (got === 0) throw fail(`${what} ends early (truncated)`);
    done += got;
  }
}

/** Opens a segment named by the manifest and reads its metadata (checked against the manifest's checksum). */
export function openSegment(
  fs: NodeFs,
  dir: string,
  entry: SegmentEntry,
  words: number,
  signature: Record<string, unknown>,
): SegmentMeta {
  const what = `segment ${entry.file}`;
  let fd: number;
  try {
    fd = fs.openSync(`${dir}/${entry.file}`, 'r');
  } catch (error) {
    throw fail(`${what}, named by ${MANIFEST}, cannot be opened (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size !== entry.bytes)
      throw fail(`${what} is ${size} bytes, the manifest says ${entry.bytes} (truncated or damaged)`);
    const start = new Uint8Array(8);
    readAt(fs, fd, start, 0, what);
    const headerLength = new DataView(start.buffer).getUint32(0, true);
    if (8 + headerLength > size) throw fail(`${what}: truncated header`);
    const headBytes = new Uint8Array(8 + headerLength);
    readAt(fs, fd, headBytes, 0, what);
    const h = readHeader(headBytes, what, SEGMENT_MAGIC, signature);
    const n = Number(h.count);
    const labelBytes = Number(h.labelBytes);
    const setWords = Number(h.setWords);
    if (n !== entry.count || h.first !== entry.first || !Number.isInteger(labelBytes) || !Number.isInteger(setWords))
      throw fail(`${what} does not hold the documents the manifest says (damaged)`);
    const metaLength = metaBytes(h.headerBytes, n, words, labelBytes);
    if (metaLength + setWords * HASH !== size)
      throw fail(`${what} is ${size} bytes where its header says otherwise (damaged)`);
    const meta = new Uint8Array(metaLength);
    readAt(fs, fd, meta, 0, what);
    if (!sealed(meta) || hex(meta.subarray(metaLength - TRAILER, metaLength - TRAILER + 16)) !== entry.meta)
      throw fail(`${what}: its checksum does not match (damaged)`);
    let at = h.headerBytes;
    const take = (length: number, padded = length) => {
      const view = meta.subarray(at, at + length);
      at += padded;
      return view;
    };
    const fps = take(n * words * 8);
    const keys = take(n * 32);
    const wordless = take(n, pad8(n));
    const sizes = new Uint32Array(meta.buffer, at, n);
    at += pad8(n * 4);
    const sums = new Uint32Array(meta.buffer, at, n * 2);
    at += n * 8;
    const labelStarts = new Uint32Array(meta.buffer, at, n + 1);
    at += pad8((n + 1) * 4);
    const labels = take(labelBytes);
    if (labelStarts[0] !== 0 || labelStarts[n] !== labelBytes) throw fail(`${what}: its labels are damaged`);
    let total = 0;
    for (let q = 0; q < n; q++) total += sizes[q]!;
    if (total !== setWords) throw fail(`${what}: its set sizes do not add up (damaged)`);
    return { fd, fps, keys, wordless, sizes, sums, labelStarts, labels, setsAt: metaLength };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/**
 * The shingle sets of the documents in segments, read by offset when a verification window needs them (and
 * checked), and of the documents added since (from `from` on), from the in-memory store: one SetSource for both.
 */
export class LayeredSets implements SetSource {
  /** Segment documents: each one's segment, byte position in its file, size (in hashes) and checksum. */
  private readonly segOf: Uint32Array;
  private readonly pos: Float64Array;
  private readonly size: Uint32Array;
  private readonly sums: Uint32Array;

  constructor(
    private readonly fs: NodeFs | null,
    private readonly fds: readonly number[],
    private readonly names: readonly string[],
    metas: readonly SegmentMeta[],
    /** Documents below this have their sets in segments. */
    readonly from: number,
    private readonly store: SetStore,
    readonly sameWordless: (i: number, j: number) => boolean,
  ) {
    this.segOf = new Uint32Array(from);
    this.pos = new Float64Array(from);
    this.size = new Uint32Array(from);
    this.sums = new Uint32Array(from * 2);
    let d = 0;
    metas.forEach((m, s) => {
      let at = m.setsAt;
      for (let q = 0; q < m.sizes.length; q++, d++) {
        this.segOf[d] = s;
        this.pos[d] = at;
        this.size[d] = m.sizes[q]!;
        at += m.sizes[q]! * HASH;
      }
      this.sums.set(m.sums, (d - m.sizes.length) * 2);
    });
  }

  cost(d: number): number {
    return d < this.from ? HASH * this.size[d]! + 16 : this.store.cost(d);
  }

  /** Document d's set: a view of the store's, or a checked copy read from its segment. */
  setOf(d: number): Uint32Array {
    if (d >= this.from) return this.store.setOf(d);
    const out = new Uint32Array(this.size[d]!);
    this.readRun(d, new Uint8Array(out.buffer));
    this.check(d, out, 0);
    return out;
  }

  load(rt: Runtime, docs: number[]): BuiltSets {
    const sorted = Uint32Array.from(docs).sort();
    for (let q = 0; q < docs.length; q++) docs[q] = sorted[q]!;
    const count = docs.length;
    let words = 0;
    for (const d of docs) words += d < this.from ? this.size[d]! : this.store.setOf(d).length;
    const starts = regions(rt).work.reserve(align16((count + 1) * 4));
    const owned = verifyRegions(rt.heap);
    owned.setsOwner = null; // whatever was there before is overwritten now
    const sets = owned.sets.reserve(words * HASH + 16);
    const { u32, u8 } = rt.heap; // after the reserves, which may grow memory
    const base = sets >>> 2;
    let at = 0;
    for (let q = 0; q < count; ) {
      const d = docs[q]!;
      u32[(starts >>> 2) + q] = at;
      if (d >= this.from) {
        const set = this.store.setOf(d);
        u32.set(set, base + at);
        at += set.length;
        q++;
        continue;
      }
      // Documents next to each other in one segment: one read.
      let end = q + 1;
      while (
        end < count &&
        docs[end]! === docs[end - 1]! + 1 &&
        docs[end]! < this.from &&
        this.segOf[docs[end]!] === this.segOf[d]
      )
        end++;
      let run = 0;
      for (let r = q; r < end; r++) run += this.size[docs[r]!]!;
      this.readRun(d, u8.subarray((base + at) * HASH, (base + at + run) * HASH));
      for (let r = q; r < end; r++) {
        u32[(starts >>> 2) + r] = at;
        this.check(docs[r]!, u32, base + at);
        at += this.size[docs[r]!]!;
      }
      q = end;
    }
    u32[(starts >>> 2) + count] = at;
    return { sets, starts, count };
  }

  /** Fills `into` with the sets of segment documents from `from` on (adjacent in one segment). */
  private readRun(from: number, into: Uint8Array): void {
    if (into.length === 0) return;
    const s = this.segOf[from]!;
    readAt(this.fs!, this.fds[s]!, into, this.pos[from]!, `segment ${this.names[s]}`);
  }

  /** Refuses a set read back that does not match its checksum. */
  private check(d: number, u32: Uint32Array, at: number): void {
    const [a, b] = setChecksum(u32, at, at + this.size[d]!);
    if (a !== this.sums[d * 2] || b !== this.sums[d * 2 + 1])
      throw fail(
        `segment ${this.names[this.segOf[d]!]}: the shingle set of document ${d} does not match its checksum (damaged)`,
      );
  }
}
