// init() in fresh processes (the module is loaded once per process): which build it picks, what a bad option
// throws, and the fallback to the scalar build when an engine validates the SIMD probe but cannot compile the
// SIMD build. Runs the sources through tsx, as test/cli/run.ts runs the CLI.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { root, tsxLoader } from '../cli/run.js';

const entry = pathToFileURL(path.join(root, 'src/index.ts')).href;

/** Runs `body` (an async function body with `lib` in scope) in a fresh Node process; returns its JSON output. */
function fresh(body: string): unknown {
  const script = `const lib = await import(${JSON.stringify(entry)});\n${body}`;
  const r = spawnSync(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('init() in a fresh process', () => {
  it('picks SIMD where the engine validates it, and hashes as the scalar build does', () => {
    const text = JSON.stringify('the quick brown fox jumps over the lazy dog');
    const out = fresh(`
      const supported = lib.simdSupported();
      await lib.init();
      console.log(JSON.stringify({ supported, build: lib.loadedBuild(), fp: String(lib.simhash(${text})) }));`) as {
      supported: boolean;
      build: string;
      fp: string;
    };
    expect(out.build).toBe(out.supported ? 'simd' : 'scalar');
    const scalar = fresh(`
      await lib.init({ build: 'scalar' });
      console.log(JSON.stringify({ build: lib.loadedBuild(), fp: String(lib.simhash(${text})) }));`);
    expect(scalar).toEqual({ build: 'scalar', fp: out.fp });
  });

  it("falls back to the scalar build when 'auto' cannot compile the SIMD one; an explicit 'simd' fails", () => {
    // An engine that accepts the SIMD probe but rejects the SIMD build: its first compile fails.
    const failFirst = `
      const compile = WebAssembly.compile;
      let calls = 0;
      WebAssembly.compile = (bytes) => calls++ === 0 ? Promise.reject(new WebAssembly.CompileError('no SIMD here')) : compile(bytes);`;
    expect(
      fresh(`${failFirst}
        await lib.init();
        console.log(JSON.stringify({ build: lib.loadedBuild(), calls, hashes: typeof lib.simhash('a b c') }));`),
    ).toEqual({ build: 'scalar', calls: 2, hashes: 'bigint' });
    expect(
      fresh(`${failFirst}
        const error = await lib.init({ build: 'simd' }).then(() => null, (e) => e.constructor.name + ': ' + e.message);
        await lib.init({ build: 'simd' }); // the failure left nothing half-loaded: a second call compiles afresh
        console.log(JSON.stringify({ error, build: lib.loadedBuild() }));`),
    ).toEqual({ error: 'CompileError: no SIMD here', build: 'simd' });
  });

  it('refuses bad options before loading anything, and stays usable', () => {
    expect(
      fresh(`
        const errors = [];
        for (const options of [{ build: 'avx' }, 42, null, { bulid: 'scalar' }]) {
          try { await lib.init(options); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
        }
        const loadedEarly = lib.loadedBuild() !== undefined;
        await lib.init();
        // Once loaded too: a misspelt option is refused, not taken for the default.
        try { await lib.init({ bulid: 'scalar' }); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
        console.log(JSON.stringify({ errors, loadedEarly, loaded: lib.loadedBuild() !== undefined }));`),
    ).toEqual({
      errors: [
        `RangeError: build must be 'auto', 'simd' or 'scalar', got "avx"`,
        'TypeError: init options must be an object, got 42',
        'TypeError: init options must be an object, got null',
        'TypeError: unknown option "bulid"',
        'TypeError: unknown option "bulid"',
      ],
      loadedEarly: false,
      loaded: true,
    });
  });
});
