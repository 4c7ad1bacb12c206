// Layouts shared by TypeScript and AssemblyScript are defined once, in src/**/*.shared.ts, and imported by both
// compilers. These tests fail when the two sides drift: when the compiled module's copy of a value differs from
// the TypeScript one (a stale build, or a kernel that stopped importing the shared file), or when an assembly/
// file defines one of the shared names again instead of importing it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as joinLayout from '../../src/join/join-layout.shared.js';
import * as indexLayout from '../../src/fingerprint-index/layout.shared.js';
import * as modes from '../../src/fingerprint/modes.shared.js';
import { wasm } from '../../src/runtime/wasm.js';

const root = path.resolve(import.meta.dirname, '../..');
const shared = {
  'src/fingerprint/modes.shared.ts': modes as Record<string, number>,
  'src/fingerprint-index/layout.shared.ts': indexLayout as Record<string, number>,
  'src/join/join-layout.shared.ts': joinLayout as Record<string, number>,
};

function assemblySources(): Array<[file: string, text: string]> {
  const dir = path.join(root, 'assembly');
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [`assembly/${f}`, fs.readFileSync(path.join(dir, f), 'utf8')]);
}

describe('layouts shared with the WebAssembly module', () => {
  for (const [file, values] of Object.entries(shared)) {
    it(`the module was compiled with the values of ${file}`, () => {
      const exports = wasm().kernels as unknown as Record<string, WebAssembly.Global | undefined>;
      expect(Object.keys(values).length).toBeGreaterThan(0);
      for (const [name, value] of Object.entries(values)) {
        expect(exports[name], `${name} is not exported by assembly/simhash.ts`).toBeInstanceOf(WebAssembly.Global);
        expect(exports[name]!.value, name).toBe(value);
      }
    });

    it(`no assembly/ file defines a name of ${file} again`, () => {
      const importer = new RegExp(`from ['"](\\.\\./)+${file.replace(/\.ts$/, '').replace(/[.]/g, '\\.')}['"]`);
      expect(
        assemblySources().some(([, text]) => importer.test(text)),
        `nothing in assembly/ imports ${file}`,
      ).toBe(true);
      for (const [source, text] of assemblySources()) {
        for (const name of Object.keys(values)) {
          expect(text, `${source} defines ${name}`).not.toMatch(new RegExp(`\\b(const|let|var)\\s+${name}\\b`));
        }
      }
    });
  }

  it('the values are small non-negative integers, as both languages read them', () => {
    for (const values of Object.values(shared)) {
      for (const [name, value] of Object.entries(values))
        expect(Number.isInteger(value) && value >= 0, name).toBe(true);
    }
  });
});
