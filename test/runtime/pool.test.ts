// The worker pool: one pool per task module, reused; never more workers than asked for nor than tasks running;
// worker results equal this thread's; a failing task rejects its own promise and leaves the pool usable.
import { describe, expect, it } from 'vitest';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { workerPool } from '../../src/runtime/pool.js';
import { wasm } from '../../src/runtime/wasm.js';
import { type HashResult, type HashTask, TASKS_URL, packTexts, transferOf } from '../../src/dedup/stream-tasks.js';

function task(texts: Array<string | Uint8Array>): HashTask {
  return { texts: packTexts(texts), options: {} };
}

describe('WorkerPool', () => {
  it('is created once per module and build, starts workers only as tasks need them, and hashes like this thread', async () => {
    const pool = workerPool(TASKS_URL, wasm().build);
    expect(workerPool(TASKS_URL, wasm().build)).toBe(pool);
    await pool.close(); // a clean start, whatever earlier tests left
    expect(pool.size).toBe(0);
    const texts = ['one two three four', new TextEncoder().encode('five six seven eight'), ''];
    const t = task(texts);
    const one = await pool.run<HashResult>('hash', t, 4, transferOf(t.texts));
    expect(pool.size).toBe(1); // one task: one worker, though four were allowed
    expect(Array.from(one.fingerprints)).toEqual(Array.from(simhashMany(texts)));
    // Four tasks at once with two threads: two workers, and every result in its place.
    const batches = [0, 1, 2, 3].map((b) => [`batch ${b} alpha beta gamma`, `batch ${b} delta`]);
    const results = await Promise.all(
      batches.map((texts) => {
        const tb = task(texts);
        return pool.run<HashResult>('hash', tb, 2, transferOf(tb.texts));
      }),
    );
    expect(pool.size).toBe(2);
    results.forEach((r, b) => expect(Array.from(r.fingerprints)).toEqual(Array.from(simhashMany(batches[b]!))));
  });

  it('rejects a failing task with its message and keeps serving', async () => {
    const pool = workerPool(TASKS_URL, wasm().build);
    await expect(pool.run('no-such-task', {}, 1)).rejects.toThrow(/unknown task "no-such-task"/);
    await expect(pool.run('hash', { texts: packTexts(['x']), options: { bits: 7 } }, 1)).rejects.toThrow(
      /bits must be 32, 64 or 128, got 7/,
    );
    const t = task(['still works']);
    const r = await pool.run<HashResult>('hash', t, 1);
    expect(Array.from(r.fingerprints)).toEqual(Array.from(simhashMany(['still works'])));
  });

  it('close() fails queued tasks; the pool starts fresh workers afterwards', async () => {
    const pool = workerPool(TASKS_URL, wasm().build);
    const failed = expect(pool.run('hash', task(['a b c']), 1)).rejects.toThrow('worker pool closed');
    await pool.close();
    await failed;
    const r = await pool.run<HashResult>('hash', task(['a b c']), 1);
    expect(Array.from(r.fingerprints)).toEqual(Array.from(simhashMany(['a b c'])));
  });
});
