// Compressed inputs, recognised by their first bytes (not their names): gzip (node:zlib; concatenated members
// too, as `zcat` reads them) and Zstandard (node:zlib where the Node has it, 22.15 and later; else fzstd, an
// optional peer dependency loaded on first use). Decompression runs on libuv's thread pool (zlib) while this
// thread parses and hashes.
import { Readable, pipeline } from 'node:stream';
import zlib from 'node:zlib';

export type Compression = 'gzip' | 'zstd';

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(head: Buffer, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((b, i) => head[i] === b);
}

/** The source's bytes, decompressed when its first bytes say it is compressed; `format` says which. */
export async function decompressed(
  raw: AsyncIterable<Buffer>,
): Promise<{ format: Compression | null; stream: AsyncIterable<Buffer> }> {
  const it = raw[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let bytes = 0;
  let ended = false;
  while (bytes < 4) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    bytes += next.value.length;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* head;
    if (ended) return;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const first = Buffer.concat(head);
  if (startsWith(first, GZIP)) return { format: 'gzip', stream: through(all(), zlib.createGunzip()) };
  if (startsWith(first, ZSTD)) {
    const native = (zlib as unknown as { createZstdDecompress?: () => NodeJS.ReadWriteStream }).createZstdDecompress;
    return { format: 'zstd', stream: native ? through(all(), native()) : await fzstdStream(all()) };
  }
  return { format: null, stream: all() };
}

function through(source: AsyncIterable<Buffer>, transform: NodeJS.ReadWriteStream): AsyncIterable<Buffer> {
  // pipeline passes the source's errors on and destroys both ends when either fails.
  return pipeline(Readable.from(source), transform, () => {}) as unknown as AsyncIterable<Buffer>;
}

async function fzstdStream(source: AsyncIterable<Buffer>): Promise<AsyncIterable<Buffer>> {
  let fzstd: typeof import('fzstd');
  try {
    fzstd = await import('fzstd');
  } catch {
    throw new Error('reading Zstandard input needs Node 22.15 or later, or the fzstd package (npm install fzstd)');
  }
  return (async function* () {
    let out: Uint8Array[] = [];
    const d = new fzstd.Decompress((chunk) => {
      out.push(chunk);
    });
    for await (const chunk of source) {
      d.push(chunk);
      for (const c of out) yield Buffer.from(c.buffer, c.byteOffset, c.length);
      out = [];
    }
    d.push(new Uint8Array(0), true);
    for (const c of out) yield Buffer.from(c.buffer, c.byteOffset, c.length);
  })();
}

/** A clear message for a decompression that failed (truncated or corrupt data). */
export function corruptMessage(format: Compression, error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const what = format === 'gzip' ? 'gzip' : 'Zstandard';
  if (e?.code === 'Z_BUF_ERROR' || /unexpected end|EOF/i.test(e?.message ?? ''))
    return `${what} data ends too soon (a truncated file): nothing of it was used`;
  return `not valid ${what} data (${e?.message ?? String(error)}): nothing of it was used`;
}
