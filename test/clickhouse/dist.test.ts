// The published entry simhash-wasm/clickhouse (dist/clickhouse.{mjs,cjs,d.cts}): reachable through the
// package's exports map by import and by require, the same functions in both, and declarations that name nothing
// from @clickhouse/client (an optional peer dependency: users without it must still type-check). Needs no cluster.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { planClusterJoin } from '../../src/clickhouse/plan.js';
import { ensureBuilt } from '../e2e/build.js';
import { ONCE, distGate } from '../e2e/gate.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const gate = distGate();

describe.runIf(ONCE && gate.run)('simhash-wasm/clickhouse in dist/', () => {
  // Builds dist/ when missing or stale (a loaded machine takes minutes).
  beforeAll(() => ensureBuilt(), 900_000);

  it('imports and requires through the exports map, with the same API and plans', async () => {
    const script = (how: string) =>
      `${how}; const p = m.planClusterJoin({ size: 1e7, k: 3, shards: 3 }); ` +
      'console.log(JSON.stringify({ names: Object.keys(m).sort(), tables: p.tables }))';
    const esm = await run(
      process.execPath,
      ['--input-type=module', '-e', script("const m = await import('simhash-wasm/clickhouse')")],
      { cwd: root },
    );
    const cjs = await run(process.execPath, ['-e', script("const m = require('simhash-wasm/clickhouse')")], {
      cwd: root,
    });
    const a = JSON.parse(esm.stdout);
    expect(JSON.parse(cjs.stdout)).toEqual(a);
    expect(a.names).toEqual(
      expect.arrayContaining(['createClickHouseTables', 'openClickHouseTables', 'planClusterJoin']),
    );
    expect(a.tables).toEqual(planClusterJoin({ size: 1e7, k: 3, shards: 3 }).tables);
  });

  it('ships declarations that do not name @clickhouse/client', () => {
    const declarations = fs.readFileSync(path.join(root, 'dist/clickhouse.d.cts'), 'utf8');
    expect(declarations).toMatch(/declare function planClusterJoin/);
    expect(declarations).not.toMatch(/@clickhouse\/client['"]/);
  });
});
