// Every document's shingle set, kept from the hashing pass for verification, so that a text is read and tokenized
// once whatever its number of candidate pairs (re-reading the texts of each window of pairs read a document once per
// earlier copy of it, and re-parsed it). Sets are kept in memory up to a budget, then appended to a temporary file
// (Node), whose name is removed at once where the system allows it, so a killed run leaves nothing behind. A
// window's sets are read back into WebAssembly memory in store order, adjacent sets in one copy or read.
//
// The file is laid out for those reads. A window holds the documents of a stretch of candidate pairs, and the join
// finds pairs among fingerprints that agree on their top blocks; so sets are written grouped by their fingerprint's
// top bits (a bucket each, in segments), and once all are written each bucket is sorted by fingerprint in place
// (arrange). On 2 GB of edited copies a window's sets were 1.23 M reads of 5 KB in file order (6.2 s of the calling
// thread), and are 0.2 M reads of about 30 KB sorted.
import type { Runtime } from '../runtime/wasm.js';
import { align16, regions } from '../runtime/marshal.js';
import { type BuiltSets, type CopiedSets, SET_HASH_BYTES as HASH, verifyRegions } from './shingle-sets.js';
import { sortedByKey } from './dedup-groups.js';
import type { SetSource } from './pair-checks.js';

/** Where sets beyond the memory budget go: positions and lengths in bytes. */
export interface SpillFile {
  /** Writes `bytes` at `position` in the background; resolves once they are written. */
  write(bytes: Uint8Array, position: number): Promise<void>;
  /** Fills `into` from `position`. */
  read(into: Uint8Array, position: number): void;
  close(): void;
}

/** Bytes of sets held in memory before the rest goes to a temporary file (default, on one thread). */
export const SET_MEMORY_BYTES = 256 << 20;

/**
 * What each worker beyond the first adds to a run's peak memory: its isolate with the library, its WebAssembly
 * memory (a walk's tables) and the shared chunks it hands over (2 GB of edited copies: 1.13 GB of peak memory on
 * two threads, 0.98 on one).
 */
const WORKER_BYTES = 64 << 20;

/**
 * The default of dedupStream's verifyMemoryBytes on `threads` threads: SET_MEMORY_BYTES, less WORKER_BYTES per
 * worker beyond the first (at least a quarter of it), so that threads do not multiply a run's memory. Sets beyond
 * it are read back from the file, most often from the page cache.
 */
export function setMemoryBytes(threads: number): number {
  return Math.max(SET_MEMORY_BYTES / 4, SET_MEMORY_BYTES - (threads - 1) * WORKER_BYTES);
}

/** Bytes of sets being written to the spill file at most before `append`'s caller waits (`drain`). */
const SPILL_BACKLOG_BYTES = 64 << 20;

/**
 * SpillLayout's gapWords and spanWords by default (in hashes: 16 KiB and 1 MiB): a read costs about 5 µs and 0.25 s
 * per GB from the page cache. On 2 GB of edited copies (8-byte hashes then), verification made 340 k reads of 15 KB
 * on average (3.1 s of the calling thread); with gaps of up to 16 KB read through, 163 k reads of 8.8 GB in all
 * (gaps of 64 KB: 90 k reads of 11.3 GB, no faster).
 */
const FILE_GAP_WORDS = (16 << 10) / HASH;
const FILE_SPAN_WORDS = (1 << 20) / HASH;

/**
 * Bytes of sets per verification window read from the store. 64 MiB holds as many documents' sets as 128 MiB did
 * with 8-byte hashes: on 2 GB of edited copies, windows of 128 MiB of 4-byte hashes took 1.04 GB of peak memory
 * against 0.83 GB, for no gain in time (19.1 s against 17.9 s, medians of 4 runs in turn).
 */
export const STORE_WINDOW_BYTES = 64 << 20;

/** How the spill file is cut up (tests make it small). */
export interface SpillLayout {
  /** Top bits of a set's key that choose its bucket. */
  bucketBits: number;
  /** Bytes of a segment: a bucket's sets are written in segments of this size, a set across two if it falls so. */
  segmentBytes: number;
  /** Most bytes of a bucket sorted at once by arrange (a longer bucket is sorted in pieces of whole sets). */
  arrangeBytes: number;
  /**
   * A window's spilled sets are read in spans: sets at most gapWords apart in the file (in hashes) in one read with
   * the sets between them, up to spanWords in all (a set longer than that alone). Default FILE_GAP_WORDS and
   * FILE_SPAN_WORDS.
   */
  gapWords?: number;
  spanWords?: number;
}

// 128 buckets of 256 KiB: 32 MiB of buffers being filled. Sorted in pieces of 16 MiB: a 2 GB corpus's buckets are
// about 14 MB each, so nearly all sort whole.
const SPILL_LAYOUT: SpillLayout = { bucketBits: 7, segmentBytes: 256 << 10, arrangeBytes: 16 << 20 };

interface Bucket {
  /** The segment being filled, and its bytes so far. */
  buffer: Uint8Array | null;
  fill: number;
  /** Bytes of sets in the bucket, and its segments' slots in the file (slot i at i × segmentBytes). */
  bytes: number;
  slots: number[];
  /** Its documents in the order written. */
  docs: Uint32Array;
  count: number;
}

interface Chunk {
  /** Position (in hashes) of data[0] in the store's sequence. */
  start: number;
  data: Uint32Array;
}

export class SetStore implements SetSource {
  /** Each document's set: its position in the store's sequence of hashes and its size; by document index. */
  private pos = new Float64Array(1024);
  private size = new Uint32Array(1024);
  private total = 0;
  private readonly chunks: Chunk[] = [];
  private memory = 0;
  /** Position from which sets are in the file (Infinity: none are). */
  private spilledFrom = Infinity;
  private spill: SpillFile | null = null;
  /** Writes to the spill file not yet finished, and their bytes. */
  private writing: Promise<void>[] = [];
  private writingBytes = 0;
  /** Each document's key (its fingerprint's top 32 bits), by document index: spilled sets are arranged by it. */
  private key = new Uint32Array(1024);
  private readonly buckets: Bucket[];
  /** Segments to fill, from writes that have finished. */
  private readonly spare: Uint8Array[] = [];
  private slotCount = 0;
  /**
   * Once arranged: the file's sets in key order, each bucket's segments one after another (positions from
   * spilledFrom, in bytes: segment i starts at start[i] and lies in slot slot[i]); and every document's rank in
   * store order, with the document of each rank, so that load sorts a window without a comparator.
   */
  private segments: { start: Float64Array; slot: Uint32Array; end: number } | null = null;
  private ranks: { rank: Uint32Array; byRank: Uint32Array } | null = null;
  /** Documents whose sets are in memory, in store order. */
  private memoryDocs: Uint32Array = new Uint32Array(16);
  private memoryCount = 0;

  constructor(
    private readonly memoryBytes: number,
    private readonly openSpill: (() => SpillFile) | null,
    /** Two documents without words: whether their trimmed texts are equal. */
    readonly sameWordless: (i: number, j: number) => boolean,
    private readonly layout: SpillLayout = SPILL_LAYOUT,
  ) {
    this.buckets = Array.from({ length: 2 ** layout.bucketBits }, () => ({
      buffer: null,
      fill: 0,
      bytes: 0,
      slots: [],
      docs: new Uint32Array(16),
      count: 0,
    }));
  }

  /** Bytes of sets stored, and how many of them went to the file. */
  get bytes(): number {
    return this.total * HASH;
  }
  get spilledBytes(): number {
    return this.spilledFrom === Infinity ? 0 : (this.total - this.spilledFrom) * HASH;
  }

  /**
   * Stores the sets of documents docs[0], docs[1], … (set q is sets' q-th), with their keys (keys[q]: the top 32
   * bits of document q's fingerprint; without them the spilled sets stay in the order written). Whether the store
   * holds on to sets.data (kept in memory); if not, its buffer is the caller's again.
   */
  append(docs: ArrayLike<number>, sets: CopiedSets, keys?: ArrayLike<number>): boolean {
    if (this.segments) throw new Error('internal: SetStore.append after arrange()');
    let top = 0;
    for (let q = 0; q < docs.length; q++) top = Math.max(top, docs[q]! + 1);
    this.reserve(top);
    const data = sets.data;
    const base = this.total;
    for (let q = 0; q < docs.length; q++) {
      this.size[docs[q]!] = sets.starts[q + 1]! - sets.starts[q]!;
      this.key[docs[q]!] = keys ? keys[q]! : 0;
    }
    if (this.spilledFrom === Infinity && (this.memory + data.byteLength <= this.memoryBytes || !this.openSpill)) {
      for (let q = 0; q < docs.length; q++) {
        this.pos[docs[q]!] = base + sets.starts[q]!;
        this.memoryDocs = pushed(this.memoryDocs, this.memoryCount++, docs[q]!);
      }
      this.chunks.push({ start: base, data });
      this.memory += data.byteLength;
      this.total += data.length;
      return true;
    }
    if (!this.spill) {
      this.spill = this.openSpill!();
      this.spilledFrom = base;
    }
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const per = 2 ** (32 - this.layout.bucketBits); // keys per bucket (a shift by 32 would shift by 0)
    for (let q = 0; q < docs.length; q++) {
      const d = docs[q]!;
      const bucket = this.buckets[Math.floor(this.key[d]! / per)]!;
      // Until arranged, a spilled set's position is its place in its bucket, in bytes.
      this.pos[d] = bucket.bytes;
      bucket.docs = pushed(bucket.docs, bucket.count++, d);
      this.fillBucket(bucket, bytes.subarray(sets.starts[q]! * HASH, sets.starts[q + 1]! * HASH));
    }
    this.total += data.length;
    return false;
  }

  /** Copies `bytes` into the bucket's segments, writing each in the background as it fills. */
  private fillBucket(bucket: Bucket, bytes: Uint8Array): void {
    const { segmentBytes } = this.layout;
    bucket.bytes += bytes.length;
    for (let at = 0; at < bytes.length; ) {
      bucket.buffer ??= this.spare.pop() ?? new Uint8Array(segmentBytes);
      const n = Math.min(bytes.length - at, segmentBytes - bucket.fill);
      bucket.buffer.set(bytes.subarray(at, at + n), bucket.fill);
      bucket.fill += n;
      at += n;
      if (bucket.fill === segmentBytes) this.writeSegment(bucket);
    }
  }

  /**
   * Writes the bucket's segment to the next slot, in the background: the hashing goes on meanwhile (written at
   * once, the CLI's calling thread spent a third of a 2 GB run in the writes while its workers waited).
   */
  private writeSegment(bucket: Bucket): void {
    const buffer = bucket.buffer!;
    const slot = this.slotCount++;
    bucket.slots.push(slot);
    const bytes = buffer.subarray(0, bucket.fill);
    bucket.buffer = null;
    bucket.fill = 0;
    this.writingBytes += bytes.length;
    const done = this.spill!.write(bytes, slot * this.layout.segmentBytes).then(() => {
      this.writingBytes -= bytes.length;
      this.spare.push(buffer);
    });
    done.catch(() => undefined); // awaited in drain; this only keeps an early failure from counting as unhandled
    this.writing.push(done);
  }

  /** Whether the caller should `drain` before appending more (the writes in the background hold their sets). */
  get backlogged(): boolean {
    return this.writingBytes > SPILL_BACKLOG_BYTES;
  }

  /** Waits until every set appended so far is in the file (or throws the first write's error). */
  async drain(): Promise<void> {
    const writing = this.writing;
    this.writing = [];
    await Promise.all(writing);
  }

  /**
   * Ends the appends: every set written, and each bucket of the file sorted by key in place (in pieces of at most
   * arrangeBytes), so that a window's sets lie in few runs. Before any load when sets went to the file.
   */
  arrange(): Promise<void> {
    if (this.segments || !this.spill) return this.drain();
    this.arranging = this.arrangeFile();
    return this.arranging;
  }

  /** Set while arrange runs, so that close waits for it (its writes must not outlive the file). */
  private arranging: Promise<void> | null = null;

  private async arrangeFile(): Promise<void> {
    for (const bucket of this.buckets) if (bucket.fill > 0) this.writeSegment(bucket);
    await this.drain();
    this.spare.length = 0;
    const { segmentBytes } = this.layout;
    const start = new Float64Array(this.slotCount);
    const slot = new Uint32Array(this.slotCount);
    const bucketStart: number[] = [];
    let s = 0;
    let end = 0;
    for (const bucket of this.buckets) {
      bucketStart.push(end);
      bucket.slots.forEach((at, j) => {
        start[s] = end + j * segmentBytes;
        slot[s++] = at;
      });
      end += bucket.bytes;
    }
    this.segments = { start, slot, end };
    let largest = 0;
    for (const bucket of this.buckets) largest = Math.max(largest, bucket.bytes);
    const length = Math.min(largest, this.layout.arrangeBytes);
    // Each piece is written back while the next is read and sorted: two output buffers in turn.
    const input = new Uint8Array(length);
    const outputs = [new Uint8Array(length), new Uint8Array(length)];
    const writes: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
    let turn = 0;
    const output = async (): Promise<{ bytes: Uint8Array; written: (done: Promise<void>) => void }> => {
      const t = turn++ % 2;
      await writes[t];
      return {
        bytes: outputs[t]!,
        written: (done) => {
          done.catch(() => undefined); // awaited on its buffer's next turn or below
          writes[t] = done;
        },
      };
    };
    try {
      for (let b = 0; b < this.buckets.length; b++)
        await this.sortBucket(this.buckets[b]!, bucketStart[b]!, input, output);
    } finally {
      await Promise.allSettled(writes);
    }
    await Promise.all(writes);
    const rank = new Uint32Array(this.pos.length);
    const byRank = new Uint32Array(this.pos.length);
    let r = 0;
    for (const d of this.memoryDocs.subarray(0, this.memoryCount)) {
      rank[d] = r;
      byRank[r++] = d;
    }
    for (const bucket of this.buckets) {
      for (const d of bucket.docs.subarray(0, bucket.count)) {
        rank[d] = r;
        byRank[r++] = d;
      }
      bucket.docs = new Uint32Array(0);
      bucket.slots = [];
    }
    this.ranks = { rank, byRank };
    this.key = new Uint32Array(0); // appends are over
  }

  /**
   * Sorts the bucket's sets by key (then by the order written), piece by piece, each piece read whole, reordered
   * and written back over itself; its documents' positions become positions in the arranged file.
   */
  private async sortBucket(
    bucket: Bucket,
    bucketStart: number,
    input: Uint8Array,
    output: () => Promise<{ bytes: Uint8Array; written: (done: Promise<void>) => void }>,
  ): Promise<void> {
    const { pos, size, key } = this;
    const docs = bucket.docs.subarray(0, bucket.count);
    for (let i = 0; i < docs.length; ) {
      const from = pos[docs[i]!]!;
      let end = from + size[docs[i]!]! * HASH;
      let j = i + 1;
      while (j < docs.length && end + size[docs[j]!]! * HASH - from <= input.length) end += size[docs[j++]!]! * HASH;
      const piece = docs.subarray(i, j);
      if (piece.length > 1) {
        this.readFile(input.subarray(0, end - from), bucketStart + from);
        const sorted = sortedByKey(piece, key);
        const out = await output();
        let at = 0;
        for (const d of sorted) {
          const n = size[d]! * HASH;
          out.bytes.set(input.subarray(pos[d]! - from, pos[d]! - from + n), at);
          pos[d] = from + at;
          at += n;
        }
        piece.set(sorted);
        out.written(this.writeFile(out.bytes.subarray(0, end - from), bucketStart + from));
      }
      for (const d of piece) pos[d] = this.spilledFrom + (bucketStart + pos[d]!) / HASH;
      i = j;
    }
  }

  /** Calls fn(position in the file, offset in the range, bytes) for each read or write of bytes at..at+length. */
  private fileRuns(at: number, length: number, fn: (position: number, offset: number, n: number) => void): void {
    const { start, slot, end } = this.segments!;
    const { segmentBytes } = this.layout;
    let s = 0;
    for (let hi = start.length - 1; s < hi; ) {
      const mid = (s + hi + 1) >> 1;
      if (start[mid]! <= at) s = mid;
      else hi = mid - 1;
    }
    for (let done = 0; done < length; ) {
      const position = slot[s]! * segmentBytes + (at + done - start[s]!);
      let stop = s + 1 < start.length ? start[s + 1]! : end;
      // Segments in consecutive slots, each full, are one run of the file.
      while (stop < at + length && stop - start[s]! === segmentBytes && slot[s + 1] === slot[s]! + 1) {
        s++;
        stop = s + 1 < start.length ? start[s + 1]! : end;
      }
      const n = Math.min(length - done, stop - (at + done));
      if (n <= 0) throw new Error(`internal: set store run at ${at + done} beyond the file`);
      fn(position, done, n);
      done += n;
      s++;
    }
  }

  private readFile(into: Uint8Array, at: number): void {
    this.fileRuns(at, into.length, (position, offset, n) =>
      this.spill!.read(into.subarray(offset, offset + n), position),
    );
  }

  private async writeFile(bytes: Uint8Array, at: number): Promise<void> {
    const writes: Promise<void>[] = [];
    this.fileRuns(at, bytes.length, (position, offset, n) =>
      writes.push(this.spill!.write(bytes.subarray(offset, offset + n), position)),
    );
    await Promise.all(writes);
  }

  private reserve(n: number): void {
    if (n <= this.pos.length) return;
    const length = Math.max(n, this.pos.length * 2);
    const pos = new Float64Array(length);
    pos.set(this.pos);
    this.pos = pos;
    const size = new Uint32Array(length);
    size.set(this.size);
    this.size = size;
    const key = new Uint32Array(length);
    key.set(this.key);
    this.key = key;
  }

  setSize(d: number): number {
    return this.size[d]!;
  }

  cost(d: number): number {
    return HASH * this.size[d]! + 16;
  }

  /** The sets of `docs`, reordered into store order, back to back in WebAssembly memory. */
  load(rt: Runtime, docs: number[]): BuiltSets {
    if (this.writing.length > 0) throw new Error('internal: SetStore.load before drain()');
    if (this.spilledFrom !== Infinity && !this.ranks) throw new Error('internal: SetStore.load before arrange()');
    if (this.spilledFrom !== Infinity && !this.spill) throw new Error('internal: SetStore.load after close()');
    const { pos, size, ranks } = this;
    // In store order, by a typed-array sort with no comparator called per step: by rank once arranged; otherwise
    // by index, since every caller appends sets in index order.
    if (ranks) {
      const sorted = new Uint32Array(docs.length);
      for (let q = 0; q < docs.length; q++) sorted[q] = ranks.rank[docs[q]!]!;
      sorted.sort();
      for (let q = 0; q < docs.length; q++) docs[q] = ranks.byRank[sorted[q]!]!;
    } else {
      const sorted = Uint32Array.from(docs).sort();
      for (let q = 0; q < docs.length; q++) docs[q] = sorted[q]!;
    }
    const count = docs.length;
    let words = 0;
    for (const d of docs) words += size[d]!;
    const starts = regions(rt).work.reserve(align16((count + 1) * 4));
    const owned = verifyRegions(rt.heap);
    owned.setsOwner = null; // whatever was there before is overwritten now
    // Room past the sets for one read's gaps (below).
    const sets = owned.sets.reserve(words * HASH + 16 + (this.spill ? this.spanWords * HASH : 0));
    const u32 = rt.heap.u32;
    const base = sets >>> 2;
    // Sets that follow each other in the store, all in one memory chunk or all in the file, move as one run: one
    // copy, or one read.
    let at = 0;
    for (let q = 0; q < count; ) {
      const from = pos[docs[q]!]!;
      if (from >= this.spilledFrom) {
        q = this.readSpan(rt, docs, q, base, at, starts);
        at = u32[(starts >>> 2) + q]!;
        continue;
      }
      const limit = this.runLimit(from);
      const first = at;
      let end = from;
      do {
        u32[(starts >>> 2) + q] = at;
        end += size[docs[q]!]!;
        at += size[docs[q]!]!;
        q++;
      } while (q < count && pos[docs[q]!] === end && end + size[docs[q]!]! <= limit);
      this.copyRun(rt, from, end, base + first);
    }
    u32[(starts >>> 2) + count] = at;
    return { sets, starts, count };
  }

  private get gapWords(): number {
    return this.layout.gapWords ?? FILE_GAP_WORDS;
  }
  private get spanWords(): number {
    return this.layout.spanWords ?? FILE_SPAN_WORDS;
  }

  /**
   * Reads the spilled sets of docs[q], docs[q + 1], … that lie within spanWords of docs[q]'s in the file, with
   * the sets between them that are not asked for, in one read to u32 index base + at; then moves each set asked for
   * down to its place, back to back (each moves towards the start, in order, so none is overwritten before it moves).
   * Writes their starts (offsets from base, in hashes), and the next one's, and returns the next q.
   */
  private readSpan(rt: Runtime, docs: number[], q: number, base: number, at: number, starts: number): number {
    const { pos, size } = this;
    const from = pos[docs[q]!]!;
    const first = q;
    let end = from;
    do {
      end = pos[docs[q]!]! + size[docs[q]!]!;
      q++;
    } while (
      q < docs.length &&
      pos[docs[q]!]! >= end &&
      pos[docs[q]!]! - end <= this.gapWords &&
      pos[docs[q]!]! + size[docs[q]!]! - from <= this.spanWords
    );
    const to = base + at;
    this.readFile(rt.heap.u8.subarray(to * HASH, (to + end - from) * HASH), (from - this.spilledFrom) * HASH);
    const u32 = rt.heap.u32;
    let next = at;
    for (let r = first; r < q; r++) {
      const d = docs[r]!;
      u32[(starts >>> 2) + r] = next;
      const src = to + (pos[d]! - from);
      if (src !== base + next) u32.copyWithin(base + next, src, src + size[d]!);
      next += size[d]!;
    }
    u32[(starts >>> 2) + q] = next;
    return q;
  }

  /** Document d's set (a view; memory-only stores, as the Deduplicator's). */
  setOf(d: number): Uint32Array {
    const p = this.pos[d]!;
    if (this.spilledFrom !== Infinity) throw new Error('internal: SetStore.setOf on a store with a spill file');
    const n = this.size[d]!;
    if (n === 0) return new Uint32Array(0);
    const c = this.chunks[this.chunkAt(p)]!;
    return c.data.subarray(p - c.start, p - c.start + n);
  }

  /** Where a run of sets starting at position p must end: its memory chunk's end, or none in the file. */
  private runLimit(p: number): number {
    if (p >= this.spilledFrom || this.chunks.length === 0) return Infinity;
    const c = this.chunks[this.chunkAt(p)]!;
    return c.start + c.data.length;
  }

  /** Copies the sets at positions from..end (one memory chunk, or the file) to u32 index `to` of WebAssembly memory. */
  private copyRun(rt: Runtime, from: number, end: number, to: number): void {
    if (end === from) return;
    if (from >= this.spilledFrom) {
      this.readFile(rt.heap.u8.subarray(to * HASH, (to + end - from) * HASH), (from - this.spilledFrom) * HASH);
      return;
    }
    const c = this.chunks[this.chunkAt(from)]!;
    rt.heap.u32.set(c.data.subarray(from - c.start, end - c.start), to);
  }

  /** The memory chunk holding position p (p below spilledFrom). */
  private chunkAt(p: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunks[mid]!.start <= p) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Closes the spill file once its writes are done (after a failure too). */
  async close(): Promise<void> {
    if (this.arranging) await this.arranging.catch(() => undefined);
    await Promise.allSettled(this.writing);
    this.writing = [];
    this.spill?.close();
    this.spill = null;
  }
}

/** `list` with `value` at `at`, grown (doubled) when full. */
function pushed(list: Uint32Array, at: number, value: number): Uint32Array {
  let out = list;
  if (at === list.length) {
    out = new Uint32Array(list.length * 2);
    out.set(list);
  }
  out[at] = value;
  return out;
}

/**
 * A spill file in the system's temporary folder (Node only; null elsewhere, where sets stay in memory). Its name is
 * removed right after it is opened (POSIX keeps the open file), so a killed run leaves no file behind; where the
 * system refuses, it is removed on close.
 */
export async function temporarySpill(): Promise<(() => SpillFile) | null> {
  if (typeof process === 'undefined' || !process.versions?.node) return null;
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-wasm-sets-'));
    const file = path.join(dir, 'sets');
    const fd = fs.openSync(file, 'w+', 0o600);
    let named = true;
    try {
      fs.unlinkSync(file);
      fs.rmdirSync(dir);
      named = false;
    } catch {
      // removed on close
    }
    return {
      async write(bytes, position) {
        for (let done = 0; done < bytes.length; ) {
          const { bytesWritten } = await new Promise<{ bytesWritten: number }>((resolve, reject) =>
            fs.write(fd, bytes, done, bytes.length - done, position + done, (error, bytesWritten) =>
              error ? reject(error) : resolve({ bytesWritten }),
            ),
          );
          done += bytesWritten;
        }
      },
      read(into, position) {
        for (let done = 0; done < into.length; ) {
          const got = fs.readSync(fd, into, done, into.length - done, position + done);
          if (got === 0) throw new Error(`set store: the spill file ended at ${position + done}`);
          done += got;
        }
      },
      close() {
        fs.closeSync(fd);
        if (named) fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}
