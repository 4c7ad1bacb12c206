// The worker side of pool.ts. Every module that has work for the pool calls offerTasks(handlers) when it loads;
// the handlers are gathered into one table. Inside a pool worker (a Node worker thread that left a hook on
// globalThis before importing the library, or a module Web Worker started under POOL_NAME) the first call starts
// answering task requests with this thread's own WebAssembly instance, loaded with the build the main thread
// uses. Elsewhere offerTasks only records the handlers.
import { init, initWithModule, loadedBuild, wasm, type Build } from './wasm.js';

export const POOL_HOOK = 'simhash-wasm.pool-worker';
/** The name a pool's Web Workers are started under: how the library knows it runs as one. */
export const POOL_NAME = 'simhash-wasm pool worker';

export interface TaskRequest {
  id: number;
  kind: string;
  build: Build;
  payload: unknown;
  /** With a worker's first task: the main thread's compiled module of `build` (see initWithModule). */
  module?: WebAssembly.Module;
}

/** A failed task's error, rebuilt on the main thread with the same class and message. */
export interface TaskError {
  name: string;
  message: string;
  stack?: string;
}

export type TaskReply = { id: number; result: unknown } | { id: number; error: TaskError };

/** The id of the reply a worker sends once it serves tasks (before that, the pool gives it none). */
export const READY_ID = -1;
/**
 * The id of the reply to a task message this worker could not read (a messageerror: say, a detached buffer in the
 * transfer list, or no memory to rebuild a large payload). A worker has one task at a time, so the pool fails
 * that one; without this reply the task would wait forever.
 */
export const UNREADABLE_ID = -2;

/** A task: its result, and the buffers to move (not copy) back to the main thread. */
export type TaskHandler = (payload: never) => { result: unknown; transfer?: ArrayBuffer[] };

interface Port {
  on(event: 'message' | 'messageerror', listener: (message: TaskRequest) => void): void;
  postMessage(message: TaskReply, transfer?: ArrayBuffer[]): void;
}

const handlers = new Map<string, TaskHandler>();
let serving = false;

/** Data kept in this worker across tasks (pool.ts, Resident): the latest version per key. */
interface Held {
  version: number;
  value: unknown;
  dispose: () => void;
}
const held = new Map<string, Held>();

/**
 * In a worker: the resident data `key` at `version`, built by `load` from `bytes` when they came with the task
 * (the older version is disposed of), else the copy kept from an earlier task.
 */
export function residentValue<T>(
  key: string,
  version: number,
  bytes: Uint8Array | undefined,
  load: (bytes: Uint8Array) => T,
  dispose: (value: T) => void,
): T {
  if (bytes !== undefined) {
    const value = load(bytes);
    dropResident(key);
    held.set(key, { version, value, dispose: () => dispose(value) });
    return value;
  }
  const h = held.get(key);
  if (!h || h.version !== version) throw new Error(`internal: worker holds no ${key} at version ${version}`);
  return h.value as T;
}

function dropResident(key: string): void {
  held.get(key)?.dispose();
  held.delete(key);
}

handlers.set('drop-resident', (key: string) => {
  dropResident(key);
  return { result: null };
});
/** Whether this worker's instance is of the module the main thread posted (else it compiled its own). */
let postedModule = false;
/** The worker's WebAssembly memory in bytes, the resident data it holds (tests: nothing grows) and its module. */
handlers.set('worker-memory', () => ({ result: { heap: wasm().heap.byteLength, residents: held.size, postedModule } }));

export function offerTasks(tasks: Record<string, TaskHandler>): void {
  for (const [kind, handler] of Object.entries(tasks)) handlers.set(kind, handler);
  if (serving) return;
  const port = poolPort();
  if (!port) return;
  serving = true;
  port.postMessage({ id: READY_ID, result: null });
  port.on('messageerror', () => {
    const message = 'a pool worker could not read its task (the message could not be deserialized)';
    port.postMessage({ id: UNREADABLE_ID, error: { name: 'Error', message } });
  });
  port.on('message', (request) => {
    void (async () => {
      try {
        // init() validates the module each time it is called: only the first task pays for that.
        if (loadedBuild() !== request.build) {
          if (request.module) await initWithModule(request.module, request.build);
          else await init({ build: request.build });
          postedModule = request.module !== undefined;
        }
        const handler = handlers.get(request.kind);
        if (!handler) throw new Error(`unknown task ${JSON.stringify(request.kind)}`);
        const { result, transfer } = handler(request.payload as never);
        port.postMessage({ id: request.id, result }, transfer);
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        port.postMessage({ id: request.id, error: { name: e.name, message: e.message, stack: e.stack } });
      }
    })();
  });
}

/** This thread's channel to the pool, when it is a pool worker. */
function poolPort(): Port | undefined {
  const hook = (globalThis as Record<symbol, unknown>)[Symbol.for(POOL_HOOK)];
  if (typeof hook === 'function') {
    let port: Port | undefined;
    (hook as (serve: (p: Port) => void) => void)((p) => {
      port = p;
    });
    return port;
  }
  const scope = globalThis as unknown as {
    WorkerGlobalScope?: unknown;
    name?: unknown;
    addEventListener(type: 'message' | 'messageerror', listener: (event: { data: TaskRequest }) => void): void;
    postMessage(message: TaskReply, transfer?: ArrayBuffer[]): void;
  };
  if (scope.WorkerGlobalScope === undefined || scope.name !== POOL_NAME) return undefined;
  return {
    on: (event, listener) => scope.addEventListener(event, (e) => listener(e.data)),
    postMessage: (message, transfer) => scope.postMessage(message, transfer ?? []),
  };
}
