// The API reference (`npm run docs`, TypeDoc over the public entry points) builds with its validation on: every
// export documented, every exported type reachable, no broken {@link}. TypeDoc runs only its checks when told to emit
// nothing, so it writes the pages into a temporary folder.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ONCE } from '../e2e/gate.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe.runIf(ONCE)('the API reference', () => {
  it('builds from typedoc.json with no warnings: every export documented, no broken links', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-api-'));
    try {
      const typedoc = path.join(root, 'node_modules/typedoc/bin/typedoc');
      const result = await run(process.execPath, [typedoc, '--out', out], { cwd: root }).then(
        (done) => ({ ...done, code: 0 }),
        (error: { stdout?: string; stderr?: string; code?: number }) => ({
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
          code: error.code,
        }),
      );
      // biome-ignore lint/suspicious/noControlCharactersInRegex: TypeDoc colours its log
      const log = `${result.stdout}\n${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
      const problems = log.split('\n').filter((line) => /^\[(warning|error)\]/.test(line));
      expect(problems).toEqual([]);
      expect(result.code, log.slice(-2000)).toBe(0);
      expect(fs.existsSync(path.join(out, 'index.html'))).toBe(true);
      // Both entry points are in it.
      const pages = fs.readdirSync(out, { recursive: true, encoding: 'utf8' }).join('\n');
      expect(pages).toMatch(/FingerprintIndex/);
      expect(pages).toMatch(/clickhouse/);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
