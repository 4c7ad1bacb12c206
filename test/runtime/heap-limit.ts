// Test hook: runs `fn` with WebAssembly memory capped at `bytes` past what is allocated now, so any
// allocation inside fails like real memory exhaustion. Restores the cap even when `fn` throws.
import { wasm } from '../../src/runtime/wasm.js';

export function withHeapLimit<T>(headroom: number, fn: () => T): T {
  const heap = wasm().heap;
  const before = heap.limit;
  heap.limit = heap.highWater + headroom;
  try {
    return fn();
  } finally {
    heap.limit = before;
  }
}
