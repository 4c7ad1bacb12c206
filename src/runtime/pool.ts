// The library's one pool of workers, each with its own WebAssembly instance: Node worker threads, or module Web
// Workers in browsers. Fingerprinting (simhashManyAsync), the join (findNearDuplicates with threads > 1), batched
// index queries (queryManyAsync) and the streaming deduper all run their tasks in it. The pool is created on first
// use and kept: later calls reuse its workers, start more only while every worker is busy and fewer than the
// caller's thread count run, and idle workers never keep a Node process alive. Each worker runs one task at a
// time; results come back per task, so the caller puts them in place by its own indices and the output does not
// depend on which worker ran what; tasks that wait for each other (the join's walks) start together
// (runTogether). Workers load the library's entry (the bundle itself, or src/index.ts under tsx), whose modules
// register their tasks through pool-worker.ts; the WebAssembly is embedded, so nothing else needs to be served or
// configured.
import { show } from '../errors.js';
import {
  POOL_HOOK,
  POOL_NAME,
  READY_ID,
  UNREADABLE_ID,
  type TaskError,
  type TaskReply,
  type TaskRequest,
} from './pool-worker.js';
import { loadedModule, wasm, type Build } from './wasm.js';

/** Largest number of workers the pool may hold. */
export const MAX_THREADS = 256;

/** How long a new worker may take to load the library and serve (a loaded machine, TypeScript sources). */
const READY_TIMEOUT_MS = 120_000;

/** One worker, whatever runs it. */
interface PoolWorker {
  post(message: TaskRequest, transfer: ArrayBuffer[]): void;
  onReply(listener: (reply: TaskReply) => void): void;
  onFailure(listener: (error: Error) => void): void;
  /** Whether the worker has work: a busy Node worker keeps the process alive, an idle one does not. */
  busy(yes: boolean): void;
  terminate(): Promise<unknown>;
}

/**
 * Data a task needs in its worker that stays there across calls (an index copy): sent with the first task a
 * worker gets for `key` at this `version`, then only named. The payload then carries `resident: bytes()`.
 */
export interface Resident {
  key: string;
  version: number;
  bytes: () => Uint8Array;
}

/** Whether this platform can post a SharedArrayBuffer to workers: Node, and browsers when cross-origin isolated. */
function canShare(): boolean {
  return (
    typeof SharedArrayBuffer === 'function' &&
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== false
  );
}

function isShared(bytes: Uint8Array): boolean {
  return typeof SharedArrayBuffer === 'function' && bytes.buffer instanceof SharedArrayBuffer;
}

/**
 * `size` zeroed bytes for a Resident snapshot: in a SharedArrayBuffer where workers can be handed it (then no worker
 * gets a copy of its own), else in an ArrayBuffer.
 */
export function snapshotBytes(size: number): Uint8Array {
  return new Uint8Array(canShare() ? new SharedArrayBuffer(size) : new ArrayBuffer(size));
}

interface Job {
  request: TaskRequest;
  transfer: ArrayBuffer[];
  resident: Resident | undefined;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: PoolWorker;
  job: Job | undefined;
  /** Versions of resident data this worker holds, by key. */
  residents: Map<string, number>;
  /** Whether the worker was sent the compiled module (with its first task). */
  sentModule: boolean;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  /** Jobs waiting for a worker; an array is a gang, given workers all at once (runTogether). */
  private readonly queue: Array<Job | Job[]> = [];
  private starting = 0;
  private nextId = 0;
  private limit = 1;

  constructor(
    private readonly url: string,
    private readonly build: Build,
  ) {}

  /** Workers alive now (for tests: never more than the threads asked for, nor more than the tasks run). */
  get size(): number {
    return this.slots.length + this.starting;
  }

  /**
   * Runs task `kind` in a worker; at most `threads` workers take part (started as tasks arrive). The buffers in
   * `transfer` move to the worker. The promise rejects with the task's error rebuilt (same class and message).
   */
  run<T>(
    kind: string,
    payload: unknown,
    threads: number,
    transfer: ArrayBuffer[] = [],
    resident?: Resident,
  ): Promise<T> {
    this.limit = Math.max(1, Math.min(threads, MAX_THREADS));
    const { job, result } = this.job<T>(kind, payload, transfer, resident);
    this.queue.push(job);
    this.dispatch();
    return result;
  }

  /**
   * Runs one task `kind` per payload, each on its own worker and all at once: none starts before there is a worker
   * for every one (started as needed, up to `threads` and at least one per task). For tasks that wait for each
   * other: given workers one by one, two such gangs could each hold a worker and wait forever for a second.
   */
  runTogether<T>(kind: string, payloads: unknown[], threads: number): Array<Promise<T>> {
    if (payloads.length > MAX_THREADS)
      throw new RangeError(`runTogether: ${payloads.length} tasks, at most ${MAX_THREADS}`);
    this.limit = Math.max(1, Math.min(threads, MAX_THREADS));
    const jobs = payloads.map((payload) => this.job<T>(kind, payload, [], undefined));
    this.queue.push(jobs.map((j) => j.job));
    this.dispatch();
    return jobs.map((j) => j.result);
  }

  /** A task's job, to be queued, and the promise of its result. */
  private job<T>(
    kind: string,
    payload: unknown,
    transfer: ArrayBuffer[],
    resident: Resident | undefined,
  ): { job: Job; result: Promise<T> } {
    const request: TaskRequest = { id: this.nextId++, kind, build: this.build, payload };
    let job: Job | undefined;
    const result = new Promise<T>((resolve, reject) => {
      job = { request, transfer, resident, resolve: resolve as (value: unknown) => void, reject };
    });
    return { job: job!, result };
  }

  /** Forgets resident data `key` (its owner is gone): workers holding it are told to drop it. */
  forget(key: string): void {
    for (const slot of this.slots) {
      if (!slot.residents.delete(key)) continue;
      // Not a job: the reply's id matches none, so it is ignored.
      slot.worker.post({ id: -1, kind: 'drop-resident', build: this.build, payload: key }, []);
    }
  }

  /** Stops every worker; tasks still queued or running fail. The pool stays usable (new workers start). */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    const error = new Error('worker pool closed');
    for (const job of this.queue.splice(0).flat()) job.reject(error);
    await Promise.all(
      slots.map((s) => {
        s.job?.reject(error);
        s.job = undefined;
        return s.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (Array.isArray(head)) {
        const limit = Math.max(this.limit, head.length);
        const usable = this.slots.slice(0, limit).filter((s) => s.job === undefined);
        if (usable.length >= head.length) {
          this.queue.shift();
          head.forEach((job, i) => this.give(usable[i]!, job));
          continue;
        }
        for (let missing = head.length - usable.length - this.starting; missing > 0; missing--)
          if (this.slots.length + this.starting < limit) this.start();
        return;
      }
      const job = head;
      const usable = this.slots.slice(0, this.limit).filter((s) => s.job === undefined);
      // A worker that already holds the job's resident data saves sending it again.
      const key = job.resident?.key;
      const idle = usable.find((s) => key !== undefined && s.residents.get(key) === job.resident!.version) ?? usable[0];
      if (idle) {
        this.queue.shift();
        this.give(idle, job);
        continue;
      }
      // The new worker takes the queue's head once it is up; others may free up before.
      if (this.slots.length + this.starting < this.limit) this.start();
      return;
    }
  }

  private give(slot: Slot, job: Job): void {
    slot.job = job;
    const r = job.resident;
    let transfer = job.transfer;
    if (r && slot.residents.get(r.key) !== r.version) {
      // Shared bytes go as they are: every worker reads the one snapshot. Otherwise a copy of its own,
      // transferred: a structured clone of 100 MB costs about a second on some machines (serialized into a
      // growing buffer, then copied again into fresh memory), a copy a small part of that.
      let resident = r.bytes();
      if (!isShared(resident)) {
        resident = resident.slice();
        transfer = [...transfer, resident.buffer as ArrayBuffer];
      }
      job.request.payload = { ...(job.request.payload as object), resident };
      slot.residents.set(r.key, r.version);
    }
    slot.worker.busy(true);
    if (!slot.sentModule) {
      slot.sentModule = true;
      const module = loadedModule();
      if (module) {
        try {
          slot.worker.post({ ...job.request, module }, transfer);
          return;
        } catch {
          // An engine that cannot post a module: the worker compiles the embedded bytes itself.
        }
      }
    }
    try {
      slot.worker.post(job.request, transfer);
    } catch (error) {
      // A payload that cannot be posted fails its job; the worker stays free for others. (Node 20 posts a detached
      // buffer and the worker cannot read it: pool-worker.ts says so. Node 24 refuses it here.)
      const why = error instanceof Error ? error.message : String(error);
      this.fail(slot, job, new Error(`a pool worker could not be sent its task (${why})`));
    }
  }

  /** Ends the slot's job with `error`; the slot is free again, and may not hold the job's resident data. */
  private fail(slot: Slot, job: Job, error: Error): void {
    slot.job = undefined;
    slot.worker.busy(false);
    if (job.resident) slot.residents.delete(job.resident.key);
    job.reject(error);
  }

  private start(): void {
    this.starting++;
    startWorker(this.url)
      .then((worker) => ready(worker, this.url))
      .then(
        (worker) => {
          this.starting--;
          const slot: Slot = { worker, job: undefined, residents: new Map(), sentModule: false };
          worker.onReply((reply) => {
            const job = slot.job;
            if (!job || (job.request.id !== reply.id && reply.id !== UNREADABLE_ID)) return;
            if ('error' in reply) this.fail(slot, job, taskError(reply.error));
            else {
              slot.job = undefined;
              worker.busy(false);
              job.resolve(reply.result);
            }
            this.dispatch();
          });
          worker.onFailure((error) => {
            const at = this.slots.indexOf(slot);
            if (at < 0) return;
            this.slots.splice(at, 1);
            slot.job?.reject(error);
            slot.job = undefined;
            void worker.terminate();
            this.dispatch();
          });
          this.slots.push(slot);
          worker.busy(false);
          this.dispatch();
        },
        (error: Error) => {
          this.starting--;
          // Without any worker nothing would ever run the queue: fail it.
          if (this.slots.length === 0 && this.starting === 0)
            for (const job of this.queue.splice(0).flat()) job.reject(error);
          else {
            // A gang that needs more workers than there now are and are starting would wait forever: it fails.
            const short = (j: Job | Job[]) => Array.isArray(j) && j.length > this.slots.length + this.starting;
            for (const gang of this.queue.filter(short)) for (const job of gang as Job[]) job.reject(error);
            this.queue.splice(0, this.queue.length, ...this.queue.filter((j) => !short(j)));
            this.dispatch();
          }
        },
      );
  }
}

/** A worker's error as the main thread throws it: RangeError and TypeError keep their class, others are Errors. */
function taskError(e: TaskError): Error {
  const Class = e.name === 'RangeError' ? RangeError : e.name === 'TypeError' ? TypeError : Error;
  const error = new Class(e.message);
  if (Class === Error && e.name !== 'Error') error.message = `${e.name}: ${e.message}`;
  if (e.stack) error.stack = `${error.stack}\n    in a pool worker: ${e.stack}`;
  return error;
}

function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string';
}

/** The worker once it serves tasks; a failure to load, or no answer in time, stops it and rejects. */
function ready(worker: PoolWorker, url: string): Promise<PoolWorker> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        void worker.terminate();
        reject(error);
      } else resolve(worker);
    };
    const timer = setTimeout(
      () =>
        done(new Error(`the worker loading ${url} served no simhash-wasm pool tasks within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    (timer as { unref?(): void }).unref?.(); // waiting must not keep a Node process alive either
    worker.onReply((reply) => {
      if (reply.id === READY_ID) done();
    });
    worker.onFailure(done);
  });
}

async function startWorker(url: string): Promise<PoolWorker> {
  if (isNode()) return startNodeWorker(url);
  if (typeof Worker === 'function') return startWebWorker(url);
  throw new Error('threads > 1 needs Node worker_threads or Web Workers; use threads: 1 in this runtime');
}

interface NodeWorker {
  on(event: 'message', listener: (reply: TaskReply) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'exit', listener: (code: number) => void): void;
  postMessage(message: TaskRequest, transfer?: readonly ArrayBuffer[]): void;
  terminate(): Promise<number>;
  unref(): void;
  ref(): void;
}

async function startNodeWorker(url: string): Promise<PoolWorker> {
  const { Worker } = await import('node:worker_threads');
  // Running from TypeScript sources (tests, development): register tsx's loader in the worker before importing.
  let loader = '';
  if (url.endsWith('.ts')) {
    const { createRequire } = await import('node:module');
    const { pathToFileURL } = await import('node:url');
    loader = pathToFileURL(
      createRequire(url)
        .resolve('tsx/esm/api')
        .replace(/\.cjs$/, '.mjs'),
    ).href;
  }
  const script =
    `const { parentPort } = require('node:worker_threads');\n` +
    `let served = false;\n` +
    `globalThis[Symbol.for(${JSON.stringify(POOL_HOOK)})] = (serve) => { served = true; serve(parentPort); };\n` +
    (loader
      ? `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); })`
      : `import(${JSON.stringify(url)})`) +
    `.then(() => { if (!served) throw new Error(${JSON.stringify(`${url} does not serve simhash-wasm pool tasks`)}); })\n` +
    `.catch((e) => { throw e; });\n`;
  const w = new Worker(script, { eval: true }) as unknown as NodeWorker;
  return {
    post: (message, transfer) => w.postMessage(message, transfer),
    onReply: (listener) => w.on('message', listener),
    onFailure: (listener) => {
      w.on('error', listener);
      w.on('exit', (code) => listener(new Error(`worker exited with code ${code}`)));
    },
    busy: (yes) => (yes ? w.ref() : w.unref()),
    terminate: () => w.terminate(),
  };
}

async function startWebWorker(url: string): Promise<PoolWorker> {
  // A module worker of the library itself: it sees its name and serves the pool (pool-worker.ts).
  const w = new Worker(url, { type: 'module', name: POOL_NAME });
  return {
    post: (message, transfer) => w.postMessage(message, transfer),
    onReply: (listener) => w.addEventListener('message', (event) => listener(event.data as TaskReply)),
    onFailure: (listener) => {
      w.addEventListener('error', (event) => {
        event.preventDefault();
        listener(new Error(`worker failed: ${event.message || `could not load ${url}`}`));
      });
      w.addEventListener('messageerror', () => listener(new Error('worker reply could not be read')));
    },
    busy: () => undefined,
    terminate: async () => w.terminate(),
  };
}

const HERE = import.meta.url;

/** What workers load: the library's entry. In a bundle that is this very file; in sources, ../index. */
function entryUrl(): string {
  const source = /\/runtime\/pool\.(ts|js)$/.exec(HERE);
  return source ? new URL(`../index.${source[1]}`, HERE).href : HERE;
}

let pool: WorkerPool | undefined;
let workerUrl: string | undefined;

/** The library's pool; its workers load the build this thread uses. */
export function sharedPool(): WorkerPool {
  const build = wasm().build;
  pool ??= new WorkerPool(workerUrl ?? entryUrl(), build);
  return pool;
}

/**
 * Where pool workers load the library from: by default the module this code was loaded from (dist/index.mjs or
 * dist/index.cjs), which is right unless a bundler folded the library into an application's own bundle: then a
 * worker would run the application. There, serve or ship the package's dist/index.mjs and name it here, before
 * the first call with threads > 1 (workers already started are stopped; tasks still running on them fail).
 */
export function setPoolWorkerUrl(url: string | URL): void {
  if (typeof url !== 'string' && !(url instanceof URL))
    throw new TypeError(`url must be a string or a URL, got ${show(url)}`);
  workerUrl = String(url);
  const old = pool;
  pool = undefined;
  void old?.close();
}

/** The hardware's concurrency: os.availableParallelism() in Node, navigator.hardwareConcurrency in browsers. */
export function hardwareThreads(): number {
  let n: number | undefined;
  if (isNode()) {
    const os = (
      process as unknown as { getBuiltinModule?(id: string): { availableParallelism?(): number; cpus(): unknown[] } }
    ).getBuiltinModule?.('node:os');
    n = os?.availableParallelism?.() ?? os?.cpus().length;
  } else {
    n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  }
  return Math.max(1, Math.min(MAX_THREADS, Number.isInteger(n) ? n! : 1));
}

/** A `threads` option: undefined, or an integer from 1 to MAX_THREADS. */
export function checkThreads(threads: unknown): number | undefined {
  if (threads === undefined) return undefined;
  if (typeof threads !== 'number') throw new TypeError(`threads must be a number, got ${show(threads)}`);
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS)
    throw new RangeError(`threads must be an integer from 1 to ${MAX_THREADS}, got ${show(threads)}`);
  return threads;
}
