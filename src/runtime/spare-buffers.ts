// Buffers that crossed to a pool worker and came back with its results, kept for the next copy: a fresh buffer
// costs a page fault per 4 KiB when first written, which on some machines (virtual ones, where a fault leaves
// the guest: ~12 µs each on the benchmark VM) costs more than the copy itself. Chunk-sized buffers (a pool task's
// texts) are allocated in one size and held strongly, a few at a time, until the pool has been idle for a second,
// so that a garbage collection between two calls does not take them (with weak references alone, packing 34 MB
// took 10-80 ms, against 9-19 ms). Larger buffers (the join's copy of the fingerprints) are held weakly: the
// garbage collector may take them whenever it likes.

/** Requests up to this many bytes get a buffer of exactly this size, so that any of them can serve any other. */
export const CHUNK_BUFFER_BYTES = 4608 << 10; // a 4 MiB chunk of text, plus room for some multi-byte characters
/** Chunk buffers held strongly at most (two tasks in flight per thread on a few threads). */
const MAX_KEPT = 8;
/** How long kept buffers outlive the last buffer handed out or given back. */
const KEEP_MS = 1000;
const MAX_WEAK = 8;

const kept: ArrayBuffer[] = [];
const weak: Array<WeakRef<ArrayBuffer>> = [];
let lastUse = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

function touch(): void {
  lastUse = Date.now();
  if (timer === undefined && kept.length > 0) arm();
}

function arm(): void {
  timer = setTimeout(() => {
    timer = undefined;
    if (Date.now() - lastUse >= KEEP_MS) kept.length = 0;
    else arm();
  }, KEEP_MS);
  // A Node timer must not keep the process alive for the sake of a cache.
  (timer as { unref?: () => void }).unref?.();
}

/** A pool task's result, with the buffer its input came in: sent back for the caller's next copy. */
export interface WithSpare<T> {
  value: T;
  spare: ArrayBuffer;
}

/** The value of a task's reply; its buffer is kept for reuse. */
export function keepSpare<T>(reply: WithSpare<T>): T {
  recycleBuffer(reply.spare);
  return reply.value;
}

/** Offers a buffer a worker has sent back (with its results) for reuse. */
export function recycleBuffer(buffer: ArrayBuffer): void {
  if (buffer.byteLength === CHUNK_BUFFER_BYTES) {
    if (kept.length < MAX_KEPT) kept.push(buffer);
  } else if (buffer.byteLength > CHUNK_BUFFER_BYTES && weak.length < MAX_WEAK) weak.push(new WeakRef(buffer));
  touch();
}

/**
 * A buffer of at least `bytes`: up to CHUNK_BUFFER_BYTES, one of that size (kept or new); above, a recycled one of
 * at most about twice the size, or a new one.
 */
export function spareBuffer(bytes: number): ArrayBuffer {
  if (bytes === 0) return new ArrayBuffer(0); // a pack of strings only: nothing to keep a chunk buffer for
  touch();
  if (bytes <= CHUNK_BUFFER_BYTES) return kept.pop() ?? new ArrayBuffer(CHUNK_BUFFER_BYTES);
  for (let i = weak.length - 1; i >= 0; i--) {
    const b = weak[i]!.deref();
    if (b && b.byteLength >= bytes && b.byteLength <= 2 * bytes + 4096) {
      weak.splice(i, 1);
      return b;
    }
    if (!b) weak.splice(i, 1);
  }
  return new ArrayBuffer(bytes);
}

/** Chunk buffers held now (tests: bounded, and released once idle). */
export function keptBuffers(): number {
  return kept.length;
}
