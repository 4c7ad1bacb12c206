// A pool of Node worker threads, each with its own WebAssembly instance, for batch tasks (the streaming deduper
// fingerprints and verifies in it). One pool per task module is created on first use and kept: later calls reuse
// its workers, start more only while every worker is busy and fewer than the caller's thread count run, and idle
// workers never keep the process alive. Each worker runs one task at a time; results come back per task, so the
// caller puts them in place by its own indices and the output does not depend on which worker ran what.
// Workers load the task module by its URL (the source file under tsx, or the bundle); the module serves tasks
// through pool-worker.ts. Browsers (Web Workers) are not supported here: the pool needs Node.
import { POOL_HOOK, type TaskReply, type TaskRequest } from './pool-worker.js';
import type { Build } from './wasm.js';

interface NodeWorker {
  on(event: 'message', listener: (reply: TaskReply) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'exit', listener: (code: number) => void): void;
  postMessage(message: TaskRequest, transfer?: readonly ArrayBuffer[]): void;
  terminate(): Promise<number>;
  unref(): void;
  ref(): void;
}

interface Job {
  request: TaskRequest;
  transfer: ArrayBuffer[];
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: NodeWorker;
  job: Job | undefined;
}

/** Largest number of workers one pool may hold. */
export const MAX_THREADS = 256;

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
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
   * Runs task `kind` of the pool's module in a worker; at most `threads` workers take part (started as tasks
   * arrive). The buffers in `transfer` move to the worker.
   */
  run<T>(kind: string, payload: unknown, threads: number, transfer: ArrayBuffer[] = []): Promise<T> {
    this.limit = Math.max(1, Math.min(threads, MAX_THREADS));
    return new Promise<T>((resolve, reject) => {
      const request: TaskRequest = { id: this.nextId++, kind, build: this.build, payload };
      this.queue.push({ request, transfer, resolve: resolve as (value: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; tasks still queued or running fail. The pool stays usable (new workers start). */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    const error = new Error('worker pool closed');
    for (const job of this.queue.splice(0)) job.reject(error);
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
      const idle = this.slots.find((s) => s.job === undefined && this.slots.indexOf(s) < this.limit);
      if (idle) {
        this.give(idle, this.queue.shift()!);
        continue;
      }
      if (this.slots.length + this.starting < this.limit) {
        this.start();
        // The new worker takes the queue's head once it is up; others may free up before.
      }
      return;
    }
  }

  private give(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    slot.worker.postMessage(job.request, job.transfer);
  }

  private start(): void {
    this.starting++;
    startWorker(this.url).then(
      (worker) => {
        this.starting--;
        const slot: Slot = { worker, job: undefined };
        worker.on('message', (reply) => {
          const job = slot.job;
          if (!job || job.request.id !== reply.id) return;
          slot.job = undefined;
          worker.unref();
          if ('error' in reply) job.reject(new Error(`worker task ${job.request.kind} failed: ${reply.error}`));
          else job.resolve(reply.result);
          this.dispatch();
        });
        const fail = (error: Error) => {
          const at = this.slots.indexOf(slot);
          if (at < 0) return;
          this.slots.splice(at, 1);
          slot.job?.reject(error);
          slot.job = undefined;
          this.dispatch();
        };
        worker.on('error', fail);
        worker.on('exit', (code) => fail(new Error(`worker exited with code ${code}`)));
        this.slots.push(slot);
        worker.unref();
        this.dispatch();
      },
      (error: Error) => {
        this.starting--;
        // Without any worker nothing would ever run the queue: fail it.
        if (this.slots.length === 0 && this.starting === 0) for (const job of this.queue.splice(0)) job.reject(error);
      },
    );
  }
}

async function startWorker(url: string): Promise<NodeWorker> {
  const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
  if (!isNode) throw new Error('threads > 1 needs Node worker_threads; use threads: 1 in this runtime');
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
    `globalThis[Symbol.for(${JSON.stringify(POOL_HOOK)})] = (serve) => serve(parentPort);\n` +
    (loader
      ? `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); })`
      : `import(${JSON.stringify(url)})`) +
    `.catch((e) => { throw e; });\n`;
  return new Worker(script, { eval: true }) as unknown as NodeWorker;
}

const pools = new Map<string, WorkerPool>();

/** The shared pool of the task module at `url` whose workers load `build`. */
export function workerPool(url: string, build: Build): WorkerPool {
  const key = `${build} ${url}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new WorkerPool(url, build)));
  return pool;
}
