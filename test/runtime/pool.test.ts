// The worker pool: one pool per task module, reused; never more workers than asked for nor than tasks running;
// worker results equal this thread's; a failing task rejects its own promise and leaves the pool usable.
import { describe, expect, it } from 'vitest';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { FINGERPRINT_TASK, type FingerprintTask, createSimHasher } from '../../src/fingerprint/fingerprint.js';
import type { SimHashOptions } from '../../src/fingerprint/options.js';
import { setPoolWorkerUrl, sharedPool } from '../../src/runtime/pool.js';
import { packTexts, transferOf } from '../../src/runtime/pool-texts.js';
import type { HashResult } from '../../src/dedup/stream-tasks.js';
import type { WithSpare } from '../../src/runtime/spare-buffers.js';

function task(texts: Array<string | Uint8Array>, options: SimHashOptions = {}): FingerprintTask {
  return { texts: packTexts(texts), plan: createSimHasher(options).options };
}

describe('WorkerPool', () => {
  it('is created once per module and build, starts workers only as tasks need them, and hashes like this thread', async () => {
    const pool = sharedPool();
    expect(sharedPool()).toBe(pool);
    await pool.close(); // a clean start, whatever earlier tests left
    expect(pool.size).toBe(0);
    const texts = ['one two three four', new TextEncoder().encode('five six seven eight'), ''];
    const t = task(texts);
    const one = await pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, t, 4, transferOf(t.texts));
    expect(pool.size).toBe(1); // one task: one worker, though four were allowed
    expect(Array.from(one.value.fingerprints)).toEqual(Array.from(simhashMany(texts)));
    // Four tasks at once with two threads: two workers, and every result in its place.
    const batches = [0, 1, 2, 3].map((b) => [`batch ${b} alpha beta gamma`, `batch ${b} delta`]);
    const results = await Promise.all(
      batches.map((texts) => {
        const tb = task(texts);
        return pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, tb, 2, transferOf(tb.texts));
      }),
    );
    expect(pool.size).toBe(2);
    results.forEach((r, b) => expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(batches[b]!))));
  });

  it('rejects a failing task with its message and keeps serving', async () => {
    const pool = sharedPool();
    await expect(pool.run('no-such-task', {}, 1)).rejects.toThrow(/unknown task "no-such-task"/);
    // An error only the worker meets keeps its class: a plan whose locale skipped the options' check (the library
    // refuses '!!' up front), so that Intl.Segmenter rejects it when the worker segments.
    const plan = { ...createSimHasher({ tokenizer: 'segmenter' }).options, locale: '!!' };
    const failure = pool.run(FINGERPRINT_TASK, { texts: packTexts(['x']), plan }, 1);
    await expect(failure).rejects.toThrow(RangeError);
    await expect(failure).rejects.toThrow(/^Incorrect locale information provided$/);
    const t = task(['still works']);
    const r = await pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, t, 1);
    expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(['still works'])));
  });

  it('rejects a task whose payload cannot be posted, and its worker keeps serving', async () => {
    const pool = sharedPool();
    const t = task(['a b c']);
    await pool.run(FINGERPRINT_TASK, t, 1); // a worker that already has the module: the plain post throws
    await expect(pool.run(FINGERPRINT_TASK, { ...task(['x']), extra: () => 1 }, 1)).rejects.toThrow(
      /could not be cloned/,
    );
    const r = await pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, task(['still works']), 1);
    expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(['still works'])));
  });

  it('rejects a task its worker cannot read (a detached buffer in the transfer list), and the worker keeps serving', async () => {
    const pool = sharedPool();
    await pool.run(FINGERPRINT_TASK, task(['a b c']), 1);
    const gone = new ArrayBuffer(64);
    const view = new Uint8Array(gone);
    // Detached: Node 20 posts it and the worker gets a messageerror; Node 24 refuses to post it.
    structuredClone(gone, { transfer: [gone] });
    await expect(pool.run(FINGERPRINT_TASK, { ...task(['x']), view }, 1, [gone])).rejects.toThrow(
      /a pool worker could not (read|be sent) its task/,
    );
    const r = await pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, task(['still works']), 1);
    expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(['still works'])));
  });

  it('close() fails queued tasks; the pool starts fresh workers afterwards', async () => {
    const pool = sharedPool();
    const failed = expect(pool.run(FINGERPRINT_TASK, task(['a b c']), 1)).rejects.toThrow('worker pool closed');
    await pool.close();
    await failed;
    const r = await pool.run<WithSpare<HashResult>>(FINGERPRINT_TASK, task(['a b c']), 1);
    expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(['a b c'])));
  });

  it('setPoolWorkerUrl() names where workers load the library; a URL that does not load fails the tasks', async () => {
    const entry = new URL('../../src/index.ts', import.meta.url);
    setPoolWorkerUrl(new URL('../../src/no-such-module.ts', import.meta.url));
    await expect(sharedPool().run(FINGERPRINT_TASK, task(['a b c']), 1)).rejects.toThrow(/Cannot find module/);
    // A module that loads but is not the library: a clear error, not a task waiting forever.
    const other = new URL('../../src/errors.ts', import.meta.url);
    setPoolWorkerUrl(other);
    await expect(sharedPool().run(FINGERPRINT_TASK, task(['a b c']), 1)).rejects.toThrow(
      `${other.href} does not serve simhash-wasm pool tasks`,
    );
    // Tasks started together (runTogether) fail too, rather than wait for workers that never come.
    await expect(
      Promise.all(sharedPool().runTogether(FINGERPRINT_TASK, [task(['a']), task(['b'])], 2)),
    ).rejects.toThrow(`${other.href} does not serve simhash-wasm pool tasks`);
    setPoolWorkerUrl(entry);
    const together = await Promise.all(
      sharedPool().runTogether<WithSpare<HashResult>>(FINGERPRINT_TASK, [task(['a b']), task(['c d'])], 1),
    );
    expect(sharedPool().size).toBe(2); // one worker per task, though one thread was asked for
    expect(together.map((t) => t.value.fingerprints[0])).toEqual(Array.from(simhashMany(['a b', 'c d'])));
    const r = await sharedPool().run<WithSpare<HashResult>>(FINGERPRINT_TASK, task(['a b c']), 1);
    expect(Array.from(r.value.fingerprints)).toEqual(Array.from(simhashMany(['a b c'])));
    expect(() => setPoolWorkerUrl(42 as never)).toThrow(TypeError);
  });
});
