// Runs part of a join's tables in a Node worker thread (threads: 2). The worker is a tiny CommonJS script that
// imports this module's own URL (source or bundle alike) after leaving a hook on globalThis; this module then
// serves join requests in the worker with its own WebAssembly instance. One worker is kept for later calls and
// does not keep the process alive. Browsers (Web Workers) are not supported here: threads: 2 needs Node.
import type { JoinPlan } from './join-plan.js';
import { walkTables } from './join.js';
import { init, wasm, type Build } from '../runtime/wasm.js';

const HOOK = Symbol.for('simhash-wasm.join-worker');

interface JoinRequest {
  id: number;
  fps: BigUint64Array;
  plan: JoinPlan;
  tables: number[];
  build: Build;
}
type JoinReply = { id: number; keys: BigUint64Array } | { id: number; error: string };

interface Port {
  on(event: 'message', listener: (message: JoinRequest) => void): void;
  postMessage(message: JoinReply, transfer?: ArrayBuffer[]): void;
}

/** In a worker: answers join requests with this thread's own WebAssembly instance. */
function serve(port: Port): void {
  port.on('message', (request) => {
    void (async () => {
      try {
        await init({ build: request.build });
        const rt = wasm();
        const { ptr, count } = walkTables(rt, request.fps, request.plan, request.tables);
        const keys = rt.heap.u64.slice(ptr >>> 3, (ptr >>> 3) + count);
        port.postMessage({ id: request.id, keys }, [keys.buffer as ArrayBuffer]);
      } catch (error) {
        port.postMessage({
          id: request.id,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    })();
  });
}

// Loaded inside a join worker: take the hook's port. Elsewhere this does nothing.
const hook = (globalThis as Record<symbol, unknown>)[HOOK];
if (typeof hook === 'function') (hook as (s: typeof serve) => void)(serve);

export interface JoinWorker {
  on(event: 'message', listener: (reply: JoinReply) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'exit', listener: (code: number) => void): void;
  postMessage(message: JoinRequest): void;
  unref(): void;
  ref(): void;
}

let worker: Promise<JoinWorker> | undefined;
const pending = new Map<number, { resolve: (keys: BigUint64Array) => void; reject: (error: Error) => void }>();
let nextId = 0;

function failAll(error: Error): void {
  for (const p of pending.values()) p.reject(error);
  pending.clear();
  worker = undefined;
}

async function startWorker(): Promise<JoinWorker> {
  const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
  if (!isNode) throw new Error('threads: 2 needs Node worker_threads; use threads: 1 in this runtime');
  const { Worker } = await import('node:worker_threads');
  const url = import.meta.url;
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
    `globalThis[Symbol.for('simhash-wasm.join-worker')] = (serve) => serve(parentPort);\n` +
    (loader
      ? `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); })`
      : `import(${JSON.stringify(url)})`) +
    `.catch((e) => { throw e; });\n`;
  const w = new Worker(script, { eval: true }) as unknown as JoinWorker;
  w.on('message', (reply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (pending.size === 0) w.unref();
    if ('error' in reply) p.reject(new Error(`join worker failed: ${reply.error}`));
    else p.resolve(reply.keys);
  });
  w.on('error', (error) => failAll(error));
  w.on('exit', (code) => failAll(new Error(`join worker exited with code ${code}`)));
  w.unref();
  return w;
}

/**
 * Posts `tables` of the plan to the worker at once (synchronously, so the worker runs while the caller does its
 * own share) and returns the pair keys it will find.
 */
export function joinInWorker(
  w: JoinWorker,
  fps: BigUint64Array,
  plan: JoinPlan,
  tables: number[],
  build: Build,
): Promise<BigUint64Array> {
  const id = nextId++;
  return new Promise<BigUint64Array>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, fps, plan, tables, build });
  });
}

/** The shared join worker, started on first use. */
export function joinWorker(): Promise<JoinWorker> {
  worker ??= startWorker();
  return worker;
}
