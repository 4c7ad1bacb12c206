// docs/cli.md documents every option the command line parses: an option added to src/cli/usage.ts without its row
// (or a row left for an option removed) fails here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEDUP_OPTIONS, OPTIONS } from '../../src/cli/usage.js';
import { ONCE } from '../e2e/gate.js';

const root = path.resolve(import.meta.dirname, '../..');
const doc = fs.readFileSync(path.join(root, 'docs/cli.md'), 'utf8');

/** The options named in the first cell of docs/cli.md's option tables. */
function documented(): Set<string> {
  const names = new Set<string>();
  for (const m of doc.matchAll(/^\| `([^`]+)` \|/gm))
    for (const o of m[1]!.matchAll(/--([a-z][a-z0-9-]*)/g)) names.add(o[1]!);
  return names;
}

describe.runIf(ONCE)('docs/cli.md', () => {
  it('has a row for every option of dedup and hash', () => {
    const have = documented();
    const parsed = Object.keys({ ...OPTIONS, ...DEDUP_OPTIONS });
    expect(parsed.filter((name) => !have.has(name))).toEqual([]);
  });
});
