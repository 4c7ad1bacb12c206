// Compressed inputs, recognised by their first bytes (not their names): gzip (node:zlib; concatenated members
// too, as `zcat` reads them) and Zstandard: node:zlib where the Node has it (22.15 and later), else the `zstd`
// program when it is installed, else fzstd (an optional peer dependency, loaded on first use). Measured on 274 MB of
// JSON Lines (Node 20, 2 cores): with fzstd, pure JavaScript on this thread, the run took 2.3 times as long as
// `zstd -dc FILE | simhash-wasm dedup -`; the zstd program in a child process runs beside this thread, as it does
// in that pipe, and checks the frames' checksums, which fzstd does not. gzip runs on libuv's thread pool.
import { spawn, spawnSync } from 'node:child_process';
import { Readable, pipeline } from 'node:stream';
import zlib from 'node:zlib';

export type Compression = 'gzip' | 'zstd';

type Done = (error: Error | null, result: Buffer) => void;
/**
 * node:zlib's Zstandard functions, where this Node has them (22.15 and 23.8 on; Node 20 has none): read by the
 * inputs here, the Parquet pages (parquet.ts) and the compressed targets (atomic-file.ts).
 */
export const zlibZstd = zlib as unknown as {
  createZstdDecompress?: () => NodeJS.ReadWriteStream;
  zstdDecompressSync?: (bytes: Uint8Array) => Buffer;
  zstdCompress?: (bytes: Uint8Array, done: Done) => void;
  zstdCompressSync?: (bytes: Uint8Array) => Buffer;
};

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(head: Buffer, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((b, i) => head[i] === b);
}

/**
 * Whether the bytes open a Zstandard stream: a frame (28 B5 2F FD) or a skippable frame (magic 0x184D2A50 to
 * 0x184D2A5F, little-endian), which pzstd and the seekable format write first. Every decoder used here skips
 * skippable frames itself (libzstd in node:zlib and the zstd program; fzstd's frame reader), so only this test
 * needed to know them.
 */
export function isZstd(head: Buffer): boolean {
  if (startsWith(head, ZSTD)) return true;
  return head.length >= 4 && (head[0]! & 0xf0) === 0x50 && head[1] === 0x2a && head[2] === 0x4d && head[3] === 0x18;
}

/** The Zstandard decoders, best first; `decompressed` takes the first that runs here (tests pick one). */
export type ZstdDecoder = 'zlib' | 'program' | 'fzstd';

/** The source's bytes, decompressed when its first bytes say it is compressed; `format` says which. */
export async function decompressed(
  raw: AsyncIterable<Buffer>,
  zstdDecoder?: ZstdDecoder,
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
  if (isZstd(first)) {
    const native = zlibZstd.createZstdDecompress;
    const decoder = zstdDecoder ?? (native ? 'zlib' : zstdProgram() ? 'program' : 'fzstd');
    if (decoder === 'zlib' && native) return { format: 'zstd', stream: through(all(), native()) };
    return { format: 'zstd', stream: decoder === 'program' ? zstdChild(all()) : await fzstdStream(all()) };
  }
  return { format: null, stream: all() };
}

function through(source: AsyncIterable<Buffer>, transform: NodeJS.ReadWriteStream): AsyncIterable<Buffer> {
  // pipeline passes the source's errors on and destroys both ends when either fails.
  return pipeline(Readable.from(source), transform, () => {}) as unknown as AsyncIterable<Buffer>;
}

let hasZstd: boolean | undefined;

/** Whether the zstd program runs here (asked once). */
function zstdProgram(): boolean {
  hasZstd ??= spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0;
  return hasZstd;
}

/** `zstd -dc` in a child process: the source to its input, its output read back; its complaint is the error. */
async function* zstdChild(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const child = spawn('zstd', ['-dcq'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const fed = new Promise<void>((resolve) => pipeline(Readable.from(source), child.stdin, () => resolve()));
  try {
    yield* child.stdout as AsyncIterable<Buffer>;
    await fed;
    const code = await exited;
    if (code !== 0) {
      const why = Buffer.concat(stderr)
        .toString('utf8')
        .trim()
        .replace(/^.*?: /, '');
      throw new Error(why || `zstd exited with ${code}`);
    }
  } finally {
    if (child.exitCode === null) child.kill();
  }
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
  if (e?.code === 'Z_BUF_ERROR' || /unexpected end|EOF|premature end/i.test(e?.message ?? ''))
    return `${what} data ends too soon (a truncated file): nothing of it was used`;
  return `not valid ${what} data (${e?.message ?? String(error)}): nothing of it was used`;
}
