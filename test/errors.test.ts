// A detached Uint8Array text gets the library's TypeError naming it from every entry point that takes texts, as
// simhashMany's did ("document 2 is a view of a detached ArrayBuffer"), where dedup, Deduplicator and dedupStream
// let the engine's own error ("Cannot perform %TypedArray%.prototype.set on a detached ArrayBuffer") through.
import { describe, expect, it } from 'vitest';
import { Deduplicator, dedup, dedupStream, simhashMany, verifyPairs } from '../src/index.js';

function detachedText(): Uint8Array {
  const bytes = new TextEncoder().encode('hello world again');
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
  return bytes;
}

const texts = () => ['the quick brown fox jumps over the lazy dog', 'a b c d', detachedText()];

describe('a detached text', () => {
  it('is named by dedup, Deduplicator.add and verifyPairs as texts[i], and by the streams as document i', async () => {
    expect(() => simhashMany(texts())).toThrow(/^document 2 is a view of a detached ArrayBuffer/);
    for (const verify of [undefined, false] as const) {
      expect(() => dedup(texts(), { verify })).toThrow(TypeError);
      expect(() => dedup(texts(), { verify })).toThrow(/^texts\[2\] is a view of a detached ArrayBuffer/);
    }
    const d = new Deduplicator();
    expect(() => d.add(texts())).toThrow(/^texts\[2\] is a view of a detached ArrayBuffer/);
    expect(d.count).toBe(0);
    const pairs = { a: Uint32Array.of(0), b: Uint32Array.of(1), distance: Uint8Array.of(0) };
    expect(() => verifyPairs(texts(), pairs)).toThrow(/^texts\[2\] is a view/);
    await expect(
      dedupStream(
        texts().map((text) => ({ text })),
        { reread: () => [] },
      ),
    ).rejects.toThrow(/^document 2 is a view of a detached ArrayBuffer/);
    await expect(d.addStream(texts())).rejects.toThrow(/^document 2 is a view of a detached ArrayBuffer/);
    expect(d.count).toBe(0);
    // An empty text that is not detached is a text like any other.
    expect(dedup(['a b c', new Uint8Array(0)]).clusterCount).toBe(2);
    expect(d.add(['a b c', new Uint8Array(0)]).duplicateOf).toEqual(Int32Array.of(-1, -1));
  });
});
