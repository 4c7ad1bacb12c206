// Files the command line writes for users to keep (--output, --removed): written to a temporary file in the
// target's own folder (so the rename cannot cross file systems), flushed with fsync, then renamed over the target,
// and the folder fsynced so the rename itself survives a crash. A run that fails or is interrupted removes its
// temporary file and leaves the target as it was; a run killed outright (SIGKILL, power loss) leaves at most a
// stray `.NAME.*.tmp` beside it, never a half-written target. The replacement keeps the old file's permission bits
// (and owner and group, where the system lets us set them), so a private file stays private. A symbolic link is
// followed: the file it leads to is replaced, beside itself, and the link stays a link.
//
// "-" (standard output) and a target that exists but is not a regular file (a FIFO, a device such as /dev/null, a
// socket, a process substitution's /dev/fd/N) are written in place as the run goes, with no temporary file and no
// rename: there is no file to replace, and a reader may be waiting on the other end, so atomicity does not apply.
//
// Where the system allows it (Linux, a file system that takes O_DIRECT), whole buffers go around the page cache,
// straight to the device: the commit's fsync then has no dirty pages to wait for, the kernel allocates no page
// cache for data nobody reads back yet (in a VM that allocation was the copy's larger and most erratic cost: 1 GB
// took 0.35–4 s of system time), and a later run that replaces the file has no gigabyte of it to evict. (Freeing
// the replaced file's blocks still takes the rename 0.15 s per GB on an ext4 mounted with `discard`.) The last,
// partial block goes through the page cache; a file system or device that refuses the alignment falls back to
// ordinary writes.
//
// A target named *.gz (or *.zst, where Node has a Zstandard compressor: 22.15 and 23.8 on) is compressed: each full
// buffer becomes one gzip member (or Zstandard frame), made on the thread pool (two at once) while the next buffer
// fills (gzip and zstd read concatenated members and frames as one stream). They are not whole blocks, so they go
// through the page cache.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { type Compression, zlibZstd } from './compression.js';

/** Bytes gathered before one write(2): two such buffers, one filled while the other is written. */
const BUFFER_BYTES = 8 << 20;
/** Buffers of a compressed file: two compressed at once on the thread pool while the third fills. */
const PACKED_BUFFERS = 3;
/** Alignment of direct writes (memory, file offset, length): the largest logical block size in common use. */
const BLOCK = 4096;
/** Bytes written through the page cache between background fdatasync calls. */
const SYNC_BYTES = 128 << 20;

/** How a target is compressed, by its name: gzip for .gz, Zstandard for .zst and .zstd; null for none. */
export function compressionOf(target: string): Compression | null {
  if (target === '-') return null;
  if (/\.gz$/i.test(target)) return 'gzip';
  if (/\.zstd?$/i.test(target)) return 'zstd';
  return null;
}

/** Whether this Node can write Zstandard (zlib's compressor: Node 22.15 and 23.8 on). */
export function canWriteZstd(): boolean {
  return typeof zlibZstd.zstdCompress === 'function' && typeof zlibZstd.zstdCompressSync === 'function';
}

/**
 * Bytes as one gzip member at gzip's default level (as `| gzip` gives), or one Zstandard frame at zstd's default
 * level, on the thread pool.
 */
function pack(codec: Compression, bytes: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, packed: Buffer) => (error ? reject(error) : resolve(packed));
    if (codec === 'gzip') zlib.gzip(bytes, done);
    else zlibZstd.zstdCompress!(bytes, done);
  });
}

function packSync(codec: Compression, bytes: Uint8Array): Buffer {
  return codec === 'gzip' ? zlib.gzipSync(bytes) : zlibZstd.zstdCompressSync!(bytes);
}

/** Where a target is written. */
export interface Destination {
  /** 'replace': a regular file (new or old) renamed over; 'stream': written in place as the run goes. */
  readonly kind: 'replace' | 'stream';
  /** The file renamed over or opened: a symbolic link's final destination, so that the link itself stays. */
  readonly path: string;
  /** The regular file replaced, if there is one: its mode and owner carry over to the new one. */
  readonly old: fs.Stats | null;
}

/**
 * Where `target` is written; throws an error that says why it cannot be (a missing or unwritable directory, a
 * directory as the target). Called before a run does any work, so that it fails before the work, not after.
 */
export function destination(target: string): Destination {
  if (target === '-') return { kind: 'stream', path: target, old: null };
  // "gone/" would otherwise pass as a file "gone" in the current directory and fail only at the rename.
  if (target.endsWith('/') || target.endsWith(path.sep)) throw fault('ends in a slash: name a file to write', 'EISDIR');
  let stat: fs.Stats | null = null;
  try {
    stat = fs.statSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (stat?.isDirectory()) throw fault('is a directory', 'EISDIR');
  if (stat !== null && !stat.isFile()) {
    try {
      fs.accessSync(target, fs.constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'EACCES';
      throw fault(`cannot write to it (${code})`, code);
    }
    return { kind: 'stream', path: target, old: null };
  }
  const file = stat !== null ? fs.realpathSync(target) : followLinks(target);
  const dir = path.dirname(file);
  try {
    if (!fs.statSync(dir).isDirectory()) throw fault('not a directory', 'ENOTDIR');
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    const why = code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : code;
    throw fault(`cannot write in ${dir}: ${why}`, code);
  }
  return { kind: 'replace', path: file, old: stat };
}

/** An error with a system code, as the file system's own are: the command line reports it as an I/O error. */
function fault(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** A path that does not exist, or a dangling symbolic link's final destination (where writing through it creates). */
function followLinks(target: string): string {
  let file = path.resolve(target);
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      link = fs.readlinkSync(file);
    } catch {
      return file;
    }
    file = path.resolve(path.dirname(file), link);
  }
  throw fault('too many levels of symbolic links', 'ELOOP');
}

/**
 * Opens a FIFO or device for writing. A FIFO with no reader yet is polled (O_NONBLOCK fails with ENXIO until one
 * comes) rather than waited on with a plain open, which would hold up the main thread (or a thread of the pool,
 * which then keeps the process from exiting) and with it the handling of ^C.
 */
async function openStream(file: string): Promise<number> {
  const { O_WRONLY, O_NONBLOCK } = fs.constants;
  if (O_NONBLOCK === undefined) return fs.openSync(file, O_WRONLY);
  for (;;) {
    let probe: number;
    try {
      probe = fs.openSync(file, O_WRONLY | O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || !fs.statSync(file).isFIFO()) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    // With a reader there, a blocking open returns at once; writes then wait for the reader instead of spinning on
    // EAGAIN.
    try {
      return fs.openSync(file, O_WRONLY);
    } finally {
      fs.closeSync(probe);
    }
  }
}

/** The replaced file's owner and permission bits, on the new file (before any data is in it). */
function keepOwnerAndMode(fd: number, old: fs.Stats): void {
  const own = fs.fstatSync(fd);
  if (own.uid !== old.uid || own.gid !== old.gid) {
    // Only root can give the file to another user; anyone may keep its group if they are in it. Otherwise the new
    // file is the writer's, as an editor's save would leave it.
    try {
      fs.fchownSync(fd, old.uid, old.gid);
    } catch {
      try {
        fs.fchownSync(fd, -1, old.gid);
      } catch {}
    }
  }
  // After the chown, which clears the set-user-ID and set-group-ID bits.
  fs.fchmodSync(fd, old.mode & 0o7777);
}

/** What a failed run did to its targets, for its error message. */
export function outcome(files: ReadonlyArray<AtomicFile | null>): string {
  const named = files.filter((f): f is AtomicFile => f !== null && f.target !== '-');
  const replaced = named.filter((f) => f.replaced).map((f) => f.target);
  const inPlace = named.filter((f) => f.inPlace).map((f) => f.target);
  const left = named.filter((f) => !f.replaced && !f.inPlace).map((f) => f.target);
  if (replaced.length === 0 && inPlace.length === 0) return 'nothing was replaced';
  return [
    replaced.length > 0 ? `${replaced.join(' and ')} ${replaced.length > 1 ? 'were' : 'was'} replaced` : '',
    inPlace.length > 0 ? `${inPlace.join(' and ')} got what was written before the error` : '',
    left.length > 0 ? `${left.join(' and ')} ${left.length > 1 ? 'were' : 'was'} left as before` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

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
  /** Whether `fd` is this object's to close (not standard output's). */
  private readonly owned: boolean;
  private closed = false;
  private renamed = false;
  /** The file written or renamed over (a symbolic link's destination). */
  private readonly path: string;
  /** The same file opened with O_DIRECT, for whole buffers; -1: none (standard output, or not allowed). */
  private direct = -1;
  private readonly temp: string | null;
  /** How the bytes are compressed on their way to the file (by the target's name). */
  private readonly codec: Compression | null;
  private readonly buffers: Buffer[];
  /** Compressed files: each buffer's compression under way (the buffer is not filled again before it ends). */
  private readonly packing = new Map<Buffer, Promise<Buffer>>();
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

  /** Opens `target` for writing ("-": standard output); a FIFO waits for its reader without blocking the process. */
  static async open(target: string): Promise<AtomicFile> {
    const where = destination(target);
    if (where.kind === 'replace' || target === '-') return new AtomicFile(target, where);
    return new AtomicFile(target, where, await openStream(where.path));
  }

  /**
   * Opens `target` for writing ("-": standard output). A FIFO with no reader blocks the process here: AtomicFile.open
   * waits without. `fd`: the target already opened (a stream).
   */
  constructor(
    readonly target: string,
    where: Destination = destination(target),
    fd?: number,
  ) {
    this.path = where.path;
    this.codec = compressionOf(target);
    if (this.codec === 'zstd' && !canWriteZstd())
      throw new Error(`${target}: writing Zstandard needs Node 22.15 or later (this is Node ${process.version})`);
    if (target === '-') {
      this.fd = 1;
      this.owned = false;
      this.temp = null;
    } else if (where.kind === 'stream') {
      this.fd = fd ?? fs.openSync(where.path, fs.constants.O_WRONLY);
      this.owned = true;
      this.temp = null;
    } else {
      const dir = path.dirname(where.path);
      const name = path.basename(where.path);
      this.temp = path.join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
      // A replacement starts private and takes the old file's mode before any data is in it; a new file gets the
      // usual 0666 less the umask, as a shell's redirection would make it.
      this.fd = fs.openSync(this.temp, 'wx', where.old !== null ? 0o600 : 0o666);
      this.owned = true;
      installCleanup();
      pending.add(this);
      if (where.old !== null) {
        try {
          keepOwnerAndMode(this.fd, where.old);
        } catch (error) {
          this.abort();
          throw error;
        }
      }
    }
    // Compressed members are not whole blocks: no direct writes.
    this.buffers =
      this.codec !== null
        ? Array.from({ length: PACKED_BUFFERS }, () => Buffer.allocUnsafe(BUFFER_BYTES))
        : this.temp !== null
          ? this.openDirect()
          : plainBuffers();
    this.buffer = this.buffers[0]!;
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
    // The tail: through the page cache where it ends mid-block. A compressed file gets a member even when empty, so
    // that it is a valid (empty) gzip or Zstandard file.
    let tail: Uint8Array = this.buffer.subarray(0, this.used);
    if (this.codec !== null && (this.used > 0 || this.position === 0)) tail = await pack(this.codec, tail);
    await this.writeAt(tail, this.position);
    this.position += tail.length;
    this.used = 0;
    if (this.temp === null) return;
    await this.syncing;
    fs.fsyncSync(this.fd);
  }

  /** Whether the target was replaced (the rename done). */
  get replaced(): boolean {
    return this.renamed;
  }

  /** Whether the target is written in place as the run goes (a FIFO, a device), not replaced. */
  get inPlace(): boolean {
    return this.temp === null && this.owned;
  }

  /** Renames the synced file over the target and fsyncs the folder: the second half of a commit. */
  publish(): void {
    if (this.done) throw new Error(`${this.target}: already closed`);
    this.idle();
    if (this.temp === null) {
      this.done = true;
      // A FIFO's reader sees the end here.
      this.closeFiles();
      return;
    }
    this.closeFiles();
    // Done only once renamed: should the rename fail, abort still removes the temporary file.
    fs.renameSync(this.temp, this.path);
    this.done = true;
    this.renamed = true;
    pending.delete(this);
    syncFolder(path.dirname(this.path));
  }

  /** Drops what was written: the temporary file is removed and the target left as it was. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    pending.delete(this);
    if (this.temp !== null) fs.rmSync(this.temp, { force: true });
    // A write under way on the thread pool still uses the descriptors: they are closed once it is over (or by the
    // process's end), so that their numbers are not reused under it.
    if (this.writing === null) this.closeFiles();
    else this.writing.then(this.closeFiles, this.closeFiles);
  }

  /** Closes the descriptors once (a number closed twice may by then be another file's). */
  private readonly closeFiles = (): void => {
    if (this.closed) return;
    this.closed = true;
    for (const fd of [this.direct, this.owned ? this.fd : -1]) {
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
    if (this.codec !== null) return this.launchPacked(this.codec);
    await this.settle();
    const write = this.writeAt(this.buffer, this.position);
    // Seen when settled (the next launch, sync); until then, not an unhandled rejection.
    write.catch(() => {});
    this.writing = write;
    this.position += this.buffer.length;
    this.buffer = this.buffer === this.buffers[0] ? this.buffers[1]! : this.buffers[0]!;
    this.used = 0;
  }

  /**
   * Compresses the full buffer on the thread pool at once, beside the compressions still under way (members are
   * independent: on two cores two buffers compress at once), and writes each member after the one before it, where
   * the file then ends. Fills the next buffer once its own compression is over.
   */
  private async launchPacked(codec: Compression): Promise<void> {
    const full = this.buffer;
    const packed = pack(codec, full);
    packed.catch(() => {});
    this.packing.set(full, packed);
    const before = this.writing;
    const write = (async () => {
      const member = await packed;
      if (before !== null) await before;
      const at = this.position;
      this.position += member.length;
      await this.writeAt(member, at);
    })();
    // Seen when settled (sync); until then, not an unhandled rejection.
    write.catch(() => {});
    this.writing = write;
    const next = this.buffers[(this.buffers.indexOf(full) + 1) % this.buffers.length]!;
    const pending = this.packing.get(next);
    this.packing.delete(next);
    // A failed compression shows through the writes, at sync.
    if (pending !== undefined) await pending.catch(() => {});
    this.buffer = next;
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
    const full = this.buffer.subarray(0, this.used);
    const bytes = this.codec !== null ? packSync(this.codec, full) : full;
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
