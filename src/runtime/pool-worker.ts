// The worker side of pool.ts. A task module calls offerTasks(handlers) when it loads; inside a pool worker (which
// left a hook on globalThis before importing the module) that starts answering task requests with this thread's
// own WebAssembly instance, loaded with the build the main thread uses. Elsewhere offerTasks does nothing.
import { init, type Build } from './wasm.js';

export const POOL_HOOK = 'simhash-wasm.pool-worker';

export interface TaskRequest {
  id: number;
  kind: string;
  build: Build;
  payload: unknown;
}

export type TaskReply = { id: number; result: unknown } | { id: number; error: string };

/** A task: its result, and the buffers to move (not copy) back to the main thread. */
export type TaskHandler = (payload: never) => { result: unknown; transfer?: ArrayBuffer[] };

interface Port {
  on(event: 'message', listener: (message: TaskRequest) => void): void;
  postMessage(message: TaskReply, transfer?: ArrayBuffer[]): void;
}

let served = false;

export function offerTasks(handlers: Record<string, TaskHandler>): void {
  const hook = (globalThis as Record<symbol, unknown>)[Symbol.for(POOL_HOOK)];
  if (typeof hook !== 'function' || served) return;
  served = true;
  (hook as (serve: (port: Port) => void) => void)((port) => {
    port.on('message', (request) => {
      void (async () => {
        try {
          await init({ build: request.build });
          const handler = handlers[request.kind];
          if (!handler) throw new Error(`unknown task ${JSON.stringify(request.kind)}`);
          const { result, transfer } = handler(request.payload as never);
          port.postMessage({ id: request.id, result }, transfer);
        } catch (error) {
          port.postMessage({
            id: request.id,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
        }
      })();
    });
  });
}
