// The Zstandard decoders one by one (the CLI takes the first that runs here), on fixtures written by Debian's zstd
// and pzstd: each gives the original bytes, and each refuses a truncated file.
import { spawnSync } from 'node:child_process';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type ZstdDecoder, decompressed } from '../../src/cli/compression.js';
import { rng } from '../reference.js';

const hasZstd = spawnSync('zstd', ['--version']).status === 0;
const hasZlibZstd = typeof (zlib as unknown as { createZstdDecompress?: unknown }).createZstdDecompress === 'function';

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

describe.skipIf(!hasZstd)('Zstandard decoders', () => {
  const next = rng(17);
  const original = Buffer.from(
    Array.from({ length: 40000 }, () => `word${Math.floor(next() * 5000)}`).join(' '),
    'utf8',
  );
  const compressed = spawnSync('zstd', ['-c'], { input: original }).stdout;
  const decoders: ZstdDecoder[] = hasZlibZstd ? ['zlib', 'program', 'fzstd'] : ['program', 'fzstd'];

  for (const decoder of decoders) {
    it(`${decoder}: the original bytes, from chunks of any size`, async () => {
      expect(compressed.subarray(0, 4)).toEqual(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
      for (const size of [1, 3, 4096, 1 << 20]) {
        const { format, stream } = await decompressed(chunksOf(compressed, size), decoder);
        expect(format).toBe('zstd');
        expect((await collect(stream)).equals(original), `chunks of ${size}`).toBe(true);
      }
    });

    it(`${decoder}: a truncated file is an error`, async () => {
      const { stream } = await decompressed(chunksOf(compressed.subarray(0, compressed.length >> 1), 1000), decoder);
      await expect(collect(stream)).rejects.toThrow();
    });
  }

  // pzstd writes a skippable frame (magic 0x184D2A50, little-endian) before each of its frames: zstd -d skips them.
  const hasPzstd = spawnSync('pzstd', ['--version']).status === 0;
  const parallel = hasPzstd ? spawnSync('pzstd', ['-c', '-p', '2', '-q'], { input: original }).stdout : Buffer.alloc(0);
  for (const decoder of decoders) {
    it.skipIf(!hasPzstd)(`${decoder}: pzstd's output (starting with a skippable frame) is Zstandard`, async () => {
      expect(parallel.readUInt32LE(0)).toBe(0x184d2a50);
      expect(spawnSync('zstd', ['-dc'], { input: parallel }).stdout.equals(original)).toBe(true);
      for (const size of [1, 7, 1 << 20]) {
        const { format, stream } = await decompressed(chunksOf(parallel, size), decoder);
        expect(format).toBe('zstd');
        expect((await collect(stream)).equals(original), `chunks of ${size}`).toBe(true);
      }
    });
  }

  it('plain bytes pass through unchanged, however short', async () => {
    for (const text of ['', 'a', 'abc', '{"text":"x"}\n']) {
      const { format, stream } = await decompressed(chunksOf(Buffer.from(text), 1));
      expect(format).toBe(null);
      expect((await collect(stream)).toString()).toBe(text);
    }
  });
});
