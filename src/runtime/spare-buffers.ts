// Buffers that crossed to a pool worker and came back with its results, kept for the next copy: a fresh buffer
// costs a page fault per 4 KiB when first written, which on some machines (virtual ones, where a fault leaves
// the guest) costs more than the copy itself. Held weakly, so the garbage collector may take them whenever it
// likes; a batch never holds more than it did before.
const spares: Array<WeakRef<ArrayBuffer>> = [];
const MAX_SPARES = 16;

/** Offers a buffer a worker has sent back (with its results) for reuse. */
export function recycleBuffer(buffer: ArrayBuffer): void {
  if (buffer.byteLength > 0 && spares.length < MAX_SPARES) spares.push(new WeakRef(buffer));
}

/** A buffer of at least `bytes` (at most about twice that): a recycled one when there is one, else a new one. */
export function spareBuffer(bytes: number): ArrayBuffer {
  for (let i = spares.length - 1; i >= 0; i--) {
    const b = spares[i]!.deref();
    if (b && b.byteLength >= bytes && b.byteLength <= 2 * bytes + 4096) {
      spares.splice(i, 1);
      return b;
    }
    if (!b) spares.splice(i, 1);
  }
  return new ArrayBuffer(bytes);
}
