// What this machine's cores deliver side by side at a given moment: plain worker threads (not the library's pool),
// each fingerprinting its own share of a batch with simhashMany, all started at once. On the shared VMs of this
// project one vCPU runs up to 1.6x slower than the other for seconds at a time (the same single-threaded
// simhashMany pinned with taskset took 88-161 ms on either vCPU, back to back), so twice one thread's speed is not
// what two threads can reach; the sum of the workers' speeds, measured in the same rounds as the pool, is.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const ENTRY = new URL('../src/index.ts', import.meta.url).href;
const LOADER = new URL(
  `file://${createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs')}`,
).href;

// Each message after the first is one timed simhashMany of the worker's share; the reply is its milliseconds.
const SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
let lib;
let texts;
const ready = import(workerData.loader)
  .then((tsx) => { tsx.register(); return import(workerData.entry); })
  .then(async (m) => { lib = m; await m.init({ build: workerData.build }); });
parentPort.on('message', async (message) => {
  await ready;
  if (message.texts) texts = message.texts;
  const t = performance.now();
  lib.simhashMany(texts);
  parentPort.postMessage(performance.now() - t);
});
`;

export class CoreCapacity {
  private readonly pending: { resolve(ms: number): void; reject(error: unknown): void }[] = [];

  private constructor(
    private readonly workers: Worker[],
    private readonly shareMB: number[],
  ) {
    workers.forEach((w, i) => {
      w.on('message', (ms: number) => this.pending[i]?.resolve(ms));
      w.on('error', (error) => this.pending[i]?.reject(error));
    });
  }

  /** One worker per share of `texts` (contiguous, about equal in bytes), loaded and warmed up. */
  static async start(texts: readonly string[], threads: number, build: string): Promise<CoreCapacity> {
    const total = texts.reduce((s, t) => s + t.length, 0);
    const shares: string[][] = Array.from({ length: threads }, () => []);
    const shareMB = new Array<number>(threads).fill(0);
    let size = 0;
    for (const t of texts) {
      const i = Math.min(threads - 1, Math.floor((size * threads) / total));
      shares[i]!.push(t);
      shareMB[i]! += t.length / 1e6;
      size += t.length;
    }
    const workers = shares.map(
      () => new Worker(SCRIPT, { eval: true, workerData: { loader: LOADER, entry: ENTRY, build } }),
    );
    const capacity = new CoreCapacity(workers, shareMB);
    await Promise.all(workers.map((_, i) => capacity.ask(i, { texts: shares[i] })));
    return capacity;
  }

  private ask(i: number, message: unknown): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending[i] = { resolve, reject };
      this.workers[i]!.postMessage(message);
    });
  }

  /** One round, every worker at once: the sum of their speeds (MB/s) and each one's milliseconds. */
  async round(): Promise<{ mbps: number; ms: number[] }> {
    const ms = await Promise.all(this.workers.map((_, i) => this.ask(i, {})));
    const mbps = ms.reduce((s, t, i) => s + this.shareMB[i]! / (t / 1000), 0);
    return { mbps, ms };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
