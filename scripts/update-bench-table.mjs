#!/usr/bin/env node
// Pastes the generated benchmark table into a markdown file, unchanged:
//
//   npm run bench -- fingerprint peers --markdown > /tmp/bench.md
//   node scripts/update-bench-table.mjs /tmp/bench.md README.md
//   npm run bench -- --markdown > /tmp/bench-all.md
//   node scripts/update-bench-table.mjs /tmp/bench-all.md docs/benchmarks.md
//
// The saved output may hold other lines (progress, notes on stderr redirected too): only its block between
// <!-- bench:start --> and <!-- bench:end --> is used. It replaces the target's first such block (the target
// defaults to README.md); test/readme-bench-table.test.ts checks that what is pasted parses.
import fs from 'node:fs';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

// The first block whose markers stand on lines of their own (prose may name them).
function block(text, name) {
  const start = text.search(/^<!-- bench:start -->$/m);
  const end = start < 0 ? -1 : text.indexOf(`\n${END}`, start);
  if (start < 0 || end < 0) throw new Error(`${name}: no ${START} … ${END} block`);
  const stop = end + 1 + END.length;
  return { start, end: stop, text: text.slice(start, stop) };
}

const [saved, target = 'README.md'] = process.argv.slice(2);
if (!saved) {
  console.error('usage: node scripts/update-bench-table.mjs SAVED-BENCH-OUTPUT [TARGET.md]');
  process.exit(2);
}
try {
  const generated = block(fs.readFileSync(saved, 'utf8'), saved).text;
  const text = fs.readFileSync(target, 'utf8');
  const old = block(text, target);
  fs.writeFileSync(target, text.slice(0, old.start) + generated + text.slice(old.end));
  console.error(`${target}: benchmark table replaced (${generated.split('\n').length - 6} rows)`);
} catch (e) {
  console.error(`update-bench-table: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
