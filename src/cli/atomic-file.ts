// Files the command line writes for users to keep (--output, --removed): written to a temporary file in the
// target's own folder (so the rename cannot cross file systems), flushed with fsync, then renamed over the target,
// and the folder fsynced so the rename itself survives a crash. A run that fails or is interrupted removes its
// temporary file and leaves the target as it was; a run killed outright (SIGKILL, power loss) leaves at most a
// stray `.NAME.*.tmp` beside it, never a half-written target. "-" writes to standard output as it goes.
//
// Where the system allows it (Linux, a file system that takes O_DIRECT), whole buffers go around the page cache,
// straight to the device: the commit's fsync then has no dirty pages to wait for, the kernel allocates no page
// cache for data nobody reads back yet (in a VM that allocation was the copy's larger and most erratic cost: 1 GB
// took 0.35–4 s of system time), and a later run that replaces the file has no gigabyte of it to evict. (Freeing
// the replaced file's blocks still takes the rename 0.15 s per GB on an ext4 mounted with `discard`.) The last,
// partial block goes through the page cache; a file system or device that refuses the alignment falls back to
// ordinary writes.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Bytes gathered before one write(2): two such buffers, one filled while the other is written. */
const BUFFER_BYTES = 8 << 20;
/** Alignment of direct writes (memory, file offset, length): the largest logical block size in common use. */
const BLOCK = 4096;
/** Bytes written through the page cache between background fdatasync calls. */
const SYNC_BYTES = 128 << 20;

/** Temporary files not yet committed, removed if the process ends first. */
const pending = new Set<AtomicFile>();
let cleanupInstalled = false;

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', () => {
    for (const f of pending) f.abort();
  });
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.once(signal, () => {
      for (const f of pending) f.abort();
      process.exit(code);
    });
  }
}

export class AtomicFile {
  private readonly fd: number;
  /** The same file opened with O_DIRECT, for whole buffers; -1: none (standard output, or not allowed). */
  private direct = -1;
  private readonly temp: string | null;
  private readonly buffers: [Buffer, Buffer];
  /** The buffer being filled, and the file offset of its first byte. */
  private buffer: Buffer;
  private used = 0;
  private position = 0;
  /** The other buffer's write, under way on the thread pool. */
  private writing: Promise<void> | null = null;
  private done = false;
  private unsynced = 0;
  /** The background fdatasync under way, if any. */
  private syncing: Promise<void> | null = null;

  /** Opens `target` for writing ("-": standard output). */
  constructor(readonly target: string) {
    if (target === '-') {
      this.fd = 1;
      this.temp = null;
    } else {
      const dir = path.dirname(path.resolve(target));
      this.temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
      this.fd = fs.openSync(this.temp, 'wx', 0o644);
      installCleanup();
      pending.add(this);
    }
    this.buffers = this.temp !== null ? this.openDirect() : plainBuffers();
    this.buffer = this.buffers[0];
  }

  /** Adds bytes to the file (synchronously: not while `append` is writing). */
  write(bytes: Uint8Array): void {
    this.idle();
    for (let at = 0; at < bytes.length; ) {
      if (this.used === this.buffer.length) this.flushSync();
      at += this.copyIn(bytes, at);
    }
  }

  /** Copies as much of `bytes` from `at` as the buffer holds; returns how much. */
  private copyIn(bytes: Uint8Array, at: number): number {
    const n = Math.min(bytes.length - at, this.buffer.length - this.used);
    this.buffer.set(at === 0 && n === bytes.length ? bytes : bytes.subarray(at, at + n), this.used);
    this.used += n;
    return n;
  }

  writeString(text: string): void {
    if (text.length * 3 <= this.buffer.length - this.used) {
      this.idle();
      this.used += this.buffer.write(text, this.used);
      return;
    }
    this.write(Buffer.from(text, 'utf8'));
  }

  /**
   * Adds `pieces` to the file: copied into a buffer, each buffer written on the thread pool when full while the
   * next is filled. Resolves once the pieces are copied (they may then change); an error of a write shows here or
   * at `sync`.
   */
  async append(pieces: readonly Uint8Array[]): Promise<void> {
    for (const p of pieces) {
      for (let at = 0; at < p.length; ) {
        if (this.used === this.buffer.length) await this.launch();
        at += this.copyIn(p, at);
      }
    }
  }

  /** Flushes what was written to the disk (fsync): the first half of a commit. */
  async sync(): Promise<void> {
    if (this.done) throw new Error(`${this.target}: already closed`);
    await this.settle();
    // The tail: through the page cache where it ends mid-block.
    await this.writeAt(this.buffer.subarray(0, this.used), this.position);
    this.position += this.used;
    this.used = 0;
    if (this.temp === null) return;
    await this.syncing;
    fs.fsyncSync(this.fd);
  }

  /** Renames the synced file over the target and fsyncs the folder: the second half of a commit. */
  publish(): void {
    if (this.done) throw new Error(`${this.target}: already closed`);
    this.idle();
    this.done = true;
    if (this.temp === null) return;
    this.closeFiles();
    fs.renameSync(this.temp, this.target);
    pending.delete(this);
    syncFolder(path.dirname(path.resolve(this.target)));
  }

  /** Drops what was written: the temporary file is removed and the target left as it was. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    pending.delete(this);
    if (this.temp === null) return;
    fs.rmSync(this.temp, { force: true });
    // A write under way on the thread pool still uses the descriptors: they are closed once it is over (or by the
    // process's end), so that their numbers are not reused under it.
    if (this.writing === null) this.closeFiles();
    else this.writing.then(this.closeFiles, this.closeFiles);
  }

  private readonly closeFiles = (): void => {
    for (const fd of [this.direct, this.fd]) {
      if (fd < 0) continue;
      try {
        fs.closeSync(fd);
      } catch {}
    }
    this.direct = -1;
  };

  /** The two buffers, aligned for O_DIRECT when the temporary file can be opened with it. */
  private openDirect(): [Buffer, Buffer] {
    const flag = fs.constants.O_DIRECT;
    if (flag === undefined) return plainBuffers();
    let memory: ArrayBuffer;
    try {
      // A WebAssembly memory starts on a page boundary (an ArrayBuffer from malloc need not), so both halves are
      // aligned for O_DIRECT.
      memory = new WebAssembly.Memory({ initial: (2 * BUFFER_BYTES) >> 16 }).buffer;
      this.direct = fs.openSync(this.temp!, fs.constants.O_WRONLY | flag);
    } catch {
      return plainBuffers();
    }
    return [Buffer.from(memory, 0, BUFFER_BYTES), Buffer.from(memory, BUFFER_BYTES, BUFFER_BYTES)];
  }

  /** Waits for the other buffer's write, then writes the full one in the background and starts on the other. */
  private async launch(): Promise<void> {
    await this.settle();
    const write = this.writeAt(this.buffer, this.position);
    // Seen when settled (the next launch, sync); until then, not an unhandled rejection.
    write.catch(() => {});
    this.writing = write;
    this.position += this.buffer.length;
    this.buffer = this.buffer === this.buffers[0] ? this.buffers[1] : this.buffers[0];
    this.used = 0;
  }

  private async settle(): Promise<void> {
    const write = this.writing;
    if (write === null) return;
    try {
      await write;
    } finally {
      this.writing = null;
    }
  }

  /** Writes a full buffer synchronously (the synchronous `write`). */
  private flushSync(): void {
    const bytes = this.buffer.subarray(0, this.used);
    for (let at = 0; at < bytes.length; ) {
      const fd = this.aligned(this.position + at, bytes.length - at) ? this.direct : this.fd;
      try {
        at += fs.writeSync(fd, bytes, at, bytes.length - at, this.temp === null ? null : this.position + at);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EINVAL' && fd === this.direct) this.dropDirect();
        // Standard output as a non-blocking pipe: wait for the reader.
        else if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        else throw error;
      }
    }
    if (this.direct < 0) this.written(bytes.length);
    this.position += bytes.length;
    this.used = 0;
  }

  /** Writes `bytes` at `position` on the thread pool (directly where aligned and allowed). */
  private async writeAt(bytes: Uint8Array, position: number): Promise<void> {
    let direct = false;
    for (let at = 0; at < bytes.length; ) {
      // After a partial direct write the rest may not be aligned: then it goes through the page cache.
      const fd = this.aligned(position + at, bytes.length - at) ? this.direct : this.fd;
      direct ||= fd === this.direct;
      try {
        at += await new Promise<number>((resolve, reject) =>
          fs.write(fd, bytes, at, bytes.length - at, this.temp === null ? null : position + at, (error, n) =>
            error ? reject(error) : resolve(n),
          ),
        );
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EINVAL' && fd === this.direct) this.dropDirect();
        else if (code === 'EAGAIN') await new Promise((resolve) => setTimeout(resolve, 5));
        else throw error;
      }
    }
    if (!direct) this.written(bytes.length);
  }

  /** Whether `length` bytes at `position` can be written directly. */
  private aligned(position: number, length: number): boolean {
    return this.direct >= 0 && position % BLOCK === 0 && length % BLOCK === 0;
  }

  /** The device or file system refused a direct write's alignment: ordinary writes from here on. */
  private dropDirect(): void {
    fs.closeSync(this.direct);
    this.direct = -1;
  }

  private idle(): void {
    if (this.writing !== null) throw new Error(`${this.target}: written to while a write is under way`);
  }

  private written(bytes: number): void {
    if (this.temp === null) return;
    this.unsynced += bytes;
    if (this.unsynced >= SYNC_BYTES && this.syncing === null) {
      this.unsynced = 0;
      // On the thread pool while the writes go on: the disk starts on the data early, and the commit's fsync waits
      // for the tail only. One at a time, as each takes all the file's dirty pages: more could fill the pool's four
      // threads and hold up the reads and writes queued behind them. An error there shows again at the commit's
      // fsync.
      this.syncing = new Promise((resolve) =>
        fs.fdatasync(this.fd, () => {
          this.syncing = null;
          resolve();
        }),
      );
    }
  }
}

function plainBuffers(): [Buffer, Buffer] {
  return [Buffer.allocUnsafe(BUFFER_BYTES), Buffer.allocUnsafe(BUFFER_BYTES)];
}

function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some file systems (and Windows) cannot fsync a folder; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
