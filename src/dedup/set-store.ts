// Every document's shingle set, kept from the hashing pass for verification, so that a text is read and tokenized
// once whatever its number of candidate pairs (re-reading the texts of each window of pairs read a document once per
// earlier copy of it, and re-parsed it). Sets are kept in memory up to a budget, then appended to a temporary file
// (Node), whose name is removed at once where the system allows it, so a killed run leaves nothing behind. A
// window's sets are read back into WebAssembly memory in store order, adjacent sets in one copy or read.
import type { Runtime } from '../runtime/wasm.js';
import { align16, regions } from '../runtime/marshal.js';
import { type BuiltSets, type CopiedSets, verifyRegions } from './shingle-sets.js';
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

/** Bytes of sets per verification window read from the store. */
export const STORE_WINDOW_BYTES = 128 << 20;

interface Chunk {
  /** Position (in u64) of data[0] in the store's sequence. */
  start: number;
  data: BigUint64Array;
}

export class SetStore implements SetSource {
  /** Each document's set: its position in the store's sequence of u64 and its size; by document index. */
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

  constructor(
    private readonly memoryBytes: number,
    private readonly openSpill: (() => SpillFile) | null,
    /** Two documents without words: whether their trimmed texts are equal. */
    readonly sameWordless: (i: number, j: number) => boolean,
  ) {}

  /** Bytes of sets stored, and how many of them went to the file. */
  get bytes(): number {
    return this.total * 8;
  }
  get spilledBytes(): number {
    return this.spilledFrom === Infinity ? 0 : (this.total - this.spilledFrom) * 8;
  }

  /** Stores the sets of documents docs[0], docs[1], … (set q is sets' q-th). */
  append(docs: ArrayLike<number>, sets: CopiedSets): void {
    let top = 0;
    for (let q = 0; q < docs.length; q++) top = Math.max(top, docs[q]! + 1);
    this.reserve(top);
    const base = this.total;
    for (let q = 0; q < docs.length; q++) {
      this.pos[docs[q]!] = base + sets.starts[q]!;
      this.size[docs[q]!] = sets.starts[q + 1]! - sets.starts[q]!;
    }
    const data = sets.data;
    if (this.spilledFrom === Infinity && (this.memory + data.byteLength <= this.memoryBytes || !this.openSpill)) {
      this.chunks.push({ start: base, data });
      this.memory += data.byteLength;
    } else {
      if (!this.spill) {
        this.spill = this.openSpill!();
        this.spilledFrom = base;
      }
      // In the background: the hashing goes on meanwhile (written at once, the CLI's calling thread spent a third
      // of a 2 GB run in the writes while its workers waited).
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      this.writingBytes += bytes.length;
      const done = this.spill.write(bytes, (base - this.spilledFrom) * 8).then(() => {
        this.writingBytes -= bytes.length;
      });
      done.catch(() => undefined); // awaited in drain; this only keeps an early failure from counting as unhandled
      this.writing.push(done);
    }
    this.total += data.length;
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

  private reserve(n: number): void {
    if (n <= this.pos.length) return;
    const length = Math.max(n, this.pos.length * 2);
    const pos = new Float64Array(length);
    pos.set(this.pos);
    this.pos = pos;
    const size = new Uint32Array(length);
    size.set(this.size);
    this.size = size;
  }

  setSize(d: number): number {
    return this.size[d]!;
  }

  cost(d: number): number {
    return 8 * this.size[d]! + 16;
  }

  /** The sets of `docs`, reordered by index, back to back in WebAssembly memory. */
  load(rt: Runtime, docs: number[]): BuiltSets {
    if (this.writing.length > 0) throw new Error('internal: SetStore.load before drain()');
    const { pos, size } = this;
    // In index order: both callers append sets in index order, so this is also their order in the store (and a
    // typed-array sort, with no comparator called per step).
    const sorted = Uint32Array.from(docs).sort();
    for (let q = 0; q < docs.length; q++) docs[q] = sorted[q]!;
    const count = docs.length;
    let words = 0;
    for (const d of docs) words += size[d]!;
    const starts = regions(rt).work.reserve(align16((count + 1) * 4));
    const owned = verifyRegions(rt.heap);
    owned.setsOwner = null; // whatever was there before is overwritten now
    const sets = owned.sets.reserve(words * 8 + 16);
    const u32 = rt.heap.u32;
    const base = sets >>> 3;
    // Sets that follow each other in the store, all in one memory chunk or all in the file, move as one run: one
    // copy, or one read.
    let at = 0;
    for (let q = 0; q < count; ) {
      const from = pos[docs[q]!]!;
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

  /** Document d's set (a view; memory-only stores, as the Deduplicator's). */
  setOf(d: number): BigUint64Array {
    const p = this.pos[d]!;
    if (p >= this.spilledFrom) throw new Error('internal: SetStore.setOf on a set in the spill file');
    const n = this.size[d]!;
    if (n === 0) return new BigUint64Array(0);
    const c = this.chunks[this.chunkAt(p)]!;
    return c.data.subarray(p - c.start, p - c.start + n);
  }

  /** Where a run of sets starting at position p must end: its memory chunk's end, or none in the file. */
  private runLimit(p: number): number {
    if (p >= this.spilledFrom || this.chunks.length === 0) return Infinity;
    const c = this.chunks[this.chunkAt(p)]!;
    return c.start + c.data.length;
  }

  /** Copies the sets at positions from..end (one memory chunk, or the file) to u64 index `to` of WebAssembly memory. */
  private copyRun(rt: Runtime, from: number, end: number, to: number): void {
    if (end === from) return;
    if (from >= this.spilledFrom) {
      this.spill!.read(rt.heap.u8.subarray(to * 8, (to + end - from) * 8), (from - this.spilledFrom) * 8);
      return;
    }
    const c = this.chunks[this.chunkAt(from)]!;
    rt.heap.u64.set(c.data.subarray(from - c.start, end - c.start), to);
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
    await Promise.allSettled(this.writing);
    this.writing = [];
    this.spill?.close();
    this.spill = null;
  }
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
