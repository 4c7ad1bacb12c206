// The WebAssembly heap, owned by JavaScript: a first-fit free-list allocator over linear memory above the
// module's static data. Blocks are 16-byte aligned; freed blocks coalesce and are reused, so memory grows
// only to the high-water mark of what is alive at once. Views are rebuilt whenever memory.grow detached them.

const PAGE = 65536;
const ALIGN = 16;
const MAX_BYTES = 65536 * PAGE; // 4 GiB: the wasm32 limit

export class Heap {
  private readonly memory: WebAssembly.Memory;
  private buffer: ArrayBuffer;
  private top: number; // end of the allocated area
  private readonly free: Array<[start: number, size: number]> = []; // sorted by start, coalesced
  private readonly sizes = new Map<number, number>();
  private _u8!: Uint8Array;
  private _u16!: Uint16Array;
  private _u32!: Uint32Array;
  private _f64!: Float64Array;
  private _u64!: BigUint64Array;
  /**
   * Largest end of the allocated area, in bytes. Tests lower it to inject an out-of-memory failure at any
   * allocation point (see test/runtime/heap-limit.ts); users never need it.
   */
  limit = MAX_BYTES;

  constructor(memory: WebAssembly.Memory, base: number) {
    this.memory = memory;
    this.top = roundUp(base);
    this.buffer = memory.buffer;
    this.views();
  }

  private views(): void {
    this.buffer = this.memory.buffer;
    this._u8 = new Uint8Array(this.buffer);
    this._u16 = new Uint16Array(this.buffer);
    this._u32 = new Uint32Array(this.buffer);
    this._f64 = new Float64Array(this.buffer);
    this._u64 = new BigUint64Array(this.buffer);
  }

  get u8(): Uint8Array {
    if (this.buffer !== this.memory.buffer) this.views();
    return this._u8;
  }
  get u16(): Uint16Array {
    if (this.buffer !== this.memory.buffer) this.views();
    return this._u16;
  }
  get u32(): Uint32Array {
    if (this.buffer !== this.memory.buffer) this.views();
    return this._u32;
  }
  get f64(): Float64Array {
    if (this.buffer !== this.memory.buffer) this.views();
    return this._f64;
  }
  get u64(): BigUint64Array {
    if (this.buffer !== this.memory.buffer) this.views();
    return this._u64;
  }

  /** End of the allocated area: the most linear memory that live blocks and free gaps span. */
  get highWater(): number {
    return this.top;
  }

  /** Bytes of linear memory now (it never shrinks). */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** Allocates `bytes` (rounded up to 16); throws RangeError when linear memory cannot hold it. */
  alloc(bytes: number): number {
    const size = Math.max(ALIGN, roundUp(bytes));
    for (let i = 0; i < this.free.length; i++) {
      const [start, avail] = this.free[i]!;
      if (avail < size) continue;
      if (avail === size) this.free.splice(i, 1);
      else this.free[i] = [start + size, avail - size];
      this.sizes.set(start, size);
      return start;
    }
    // Take from the top, reusing a free block that ends there.
    let start = this.top;
    const last = this.free[this.free.length - 1];
    if (last && last[0] + last[1] === this.top) start = last[0];
    const end = start + size;
    if (end > this.limit) {
      throw new RangeError(
        this.limit === MAX_BYTES
          ? `cannot allocate ${bytes} bytes: WebAssembly memory is limited to 4 GiB`
          : `cannot allocate ${bytes} bytes: WebAssembly memory is limited to ${this.limit} bytes (test limit)`,
      );
    }
    if (end > this.memory.buffer.byteLength) {
      const pages = Math.ceil((end - this.memory.buffer.byteLength) / PAGE);
      try {
        this.memory.grow(pages);
      } catch (error) {
        throw new RangeError(`cannot allocate ${bytes} bytes: WebAssembly memory could not grow (${String(error)})`);
      }
    }
    if (start !== this.top) this.free.pop();
    this.top = end;
    this.sizes.set(start, size);
    return start;
  }

  /** Returns a block to the free list; merges it with free neighbours. */
  release(ptr: number): void {
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`internal: release of unknown block ${ptr}`);
    this.sizes.delete(ptr);
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.free[mid]![0] < ptr) lo = mid + 1;
      else hi = mid;
    }
    let start = ptr;
    let end = ptr + size;
    const next = this.free[lo];
    if (next && next[0] === end) {
      end += next[1];
      this.free.splice(lo, 1);
    }
    const prev = this.free[lo - 1];
    if (prev && prev[0] + prev[1] === start) {
      start = prev[0];
      this.free[lo - 1] = [start, end - start];
    } else {
      this.free.splice(lo, 0, [start, end - start]);
    }
  }

  /** Bytes in live blocks (for tests and memory reports). */
  get liveBytes(): number {
    let total = 0;
    for (const size of this.sizes.values()) total += size;
    return total;
  }
}

/**
 * A reusable block for per-call data: `reserve` hands out at least `bytes`, growing (and moving) only when a
 * call needs more than any call before it. `keep` preserves the first `keep` bytes when it moves.
 */
export class Region {
  private ptr = 0;
  private size = 0;
  constructor(private readonly heap: Heap) {}

  reserve(bytes: number, keep = 0): number {
    if (bytes <= this.size) return this.ptr;
    const size = Math.max(roundUp(bytes), Math.min(this.size * 2, this.size + (64 << 20)));
    const ptr = this.heap.alloc(size);
    if (this.size > 0) {
      if (keep > 0) this.heap.u8.copyWithin(ptr, this.ptr, this.ptr + keep);
      this.heap.release(this.ptr);
    }
    this.ptr = ptr;
    this.size = size;
    return ptr;
  }

  /** Reserves parts of the given sizes back to back, each 16-byte aligned: where each starts. */
  reserveParts(sizes: readonly number[]): number[] {
    const at: number[] = [];
    let total = 0;
    for (const s of sizes) {
      at.push(total);
      total += roundUp(s);
    }
    const base = this.reserve(total);
    return at.map((x) => base + x);
  }
}

/**
 * A Region whose parts keep what one caller wrote in them across calls: `parts` reserves them and says whether they
 * still hold what the caller named by `key` (compared item by item, with where they start) last claimed; they
 * are nobody's until `claim` is called again, so a call that fails half-way leaves them to be written afresh.
 */
export class KeptRegion {
  private readonly region: Region;
  private key: readonly unknown[] | null = null;
  constructor(heap: Heap) {
    this.region = new Region(heap);
  }

  parts(sizes: readonly number[], key: readonly unknown[]): { at: number[]; kept: boolean; claim(): void } {
    const at = this.region.reserveParts(sizes);
    const full = [...key, at[0]];
    const held = this.key;
    const kept = held !== null && held.length === full.length && held.every((x, i) => x === full[i]);
    this.key = null;
    return {
      at,
      kept,
      claim: () => {
        this.key = full;
      },
    };
  }
}

function roundUp(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}
