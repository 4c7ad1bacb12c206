// Every fast-check property in the test tree runs with a fixed seed and run count, so a failure reproduces and
// a passing suite means the same inputs passed as last time.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';

const root = new URL('.', import.meta.url).pathname;

/** The text of each fc.assert(...) call, found by matching parentheses. */
function assertCalls(source: string): string[] {
  const calls: string[] = [];
  for (let at = source.indexOf('fc.assert('); at >= 0; at = source.indexOf('fc.assert(', at + 1)) {
    let depth = 0;
    let end = at + 'fc.assert'.length;
    do {
      const c = source[end++];
      if (c === '(') depth++;
      else if (c === ')') depth--;
    } while (depth > 0 && end < source.length);
    calls.push(source.slice(at, end));
  }
  return calls;
}

describe('property tests', () => {
  it('every fc.assert in test/ passes a seed and numRuns', () => {
    const files = fs
      .readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('property-seeds.test.ts'));
    const unseeded: string[] = [];
    let count = 0;
    for (const f of files) {
      for (const call of assertCalls(fs.readFileSync(path.join(root, f), 'utf8'))) {
        count++;
        if (!/\bseed:\s*\S/.test(call) || !/\bnumRuns:\s*\S/.test(call)) unseeded.push(`${f}: ${call.slice(0, 60)}`);
      }
    }
    expect(unseeded).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(5);
  });
});
