// Makes sure dist/ and build/examples/browser are built from the current sources before the e2e tests use them:
// builds them (npm run build, npm run build:examples) when missing or older than any source. The two e2e files run
// in parallel workers, so the check and the build happen under a lock directory.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

const DIST = ['index.mjs', 'index.cjs', 'index.d.cts', 'wasm.mjs', 'cli.mjs', 'sample/licenses.jsonl.gz'];
const DIST_SOURCES = [
  'src',
  'assembly',
  'package.json',
  'rollup.config.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build-wasm.mjs',
  'scripts/pack-sample.mjs',
];
// Rewritten (same bytes, new mtime) by every `npm test`; it is generated from assembly/, which is checked.
const GENERATED = path.join(root, 'src/runtime/wasm-binary.ts');

function newest(paths: string[]): number {
  let t = 0;
  for (const p of paths) {
    const full = path.join(root, p);
    if (!fs.existsSync(full)) continue;
    const stat = fs.statSync(full);
    if (!stat.isDirectory()) t = Math.max(t, stat.mtimeMs);
    else {
      for (const f of fs.readdirSync(full, { recursive: true, encoding: 'utf8' })) {
        const file = path.join(full, f);
        if (file !== GENERATED) t = Math.max(t, fs.statSync(file).mtimeMs);
      }
    }
  }
  return t;
}

/** The oldest of the outputs, or -1 when one is missing. */
function oldest(dir: string, files: string[]): number {
  let t = Number.POSITIVE_INFINITY;
  for (const f of files) {
    const full = path.join(root, dir, f);
    if (!fs.existsSync(full)) return -1;
    t = Math.min(t, fs.statSync(full).mtimeMs);
  }
  return t;
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = path.join(root, 'build/.e2e-build.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a killed run is older than any build takes.
      if (Date.now() - fs.statSync(lock).mtimeMs > 10 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${lock} held for 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

async function npmRun(script: string): Promise<void> {
  try {
    await run('npm', ['run', script, '--silent'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm run ${script} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** Builds dist/ and the example page when missing or stale. Returns what it built, for the test log. */
export async function ensureBuilt(): Promise<string[]> {
  return withLock(async () => {
    const built: string[] = [];
    if (oldest('dist', DIST) < newest(DIST_SOURCES)) {
      await npmRun('build');
      built.push('dist');
    }
    const page = oldest('build/examples/browser', ['index.html', 'lib/simhash-wasm.mjs', 'lib/wasm.mjs']);
    if (page < newest(['examples/browser', 'dist/index.mjs', 'dist/wasm.mjs', 'scripts/build-examples.mjs'])) {
      await npmRun('build:examples');
      built.push('build/examples/browser');
    }
    return built;
  });
}
