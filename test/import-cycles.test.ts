// src/ has no import cycles, counting every edge: value and type-only imports (`import type`, `import { type X }`),
// re-exports (`export ... from`), dynamic `import('...')` calls and `import('...')` types. A type-only circle erases at
// runtime but is still a circle in the design: two modules that each need the other's declarations.
//
// Biome's lint/suspicious/noImportCycles is not used: with ignoreTypes off it flags type-only circles, but it does not
// see the `import('...')` type queries, and a test can print the whole path of each circle.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) files.push(path);
  }
  return files;
}

/** The file a relative specifier names, with NodeNext's `.js` standing for the `.ts` source; undefined if none. */
function resolveSpecifier(from: string, specifier: string, files: Set<string>): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = /\.[cm]?js$/.test(base)
    ? [base.replace(/\.([cm]?)js$/, '.$1ts'), base]
    : [base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => files.has(candidate));
}

/** Each file of `files` mapped to the files of `files` it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    // preProcessFile reads the import declarations (`import type` too), `export ... from`, `import x = require()`
    // and every `import('...')`, call or type, without reading the specifiers in comments or other strings.
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveSpecifier(file, fileName, known);
      if (target === undefined) throw new Error(`${relative(ROOT, file)}: cannot resolve '${fileName}'`);
      if (target !== file) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each its files, sorted, and the shortest circle
 *  from the first of them back to itself. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): { files: string[]; circle: string[] }[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components.map((files) => ({ files, circle: shortestCircle(graph, files) }));
}

function shortestCircle(graph: ReadonlyMap<string, readonly string[]>, component: readonly string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...component, start];
}

describe('src/ import graph', () => {
  it('has no import cycles, type-only imports included', () => {
    const name = (file: string) => relative(ROOT, file);
    const cycles = importCycles(importGraph(sourceFiles(SRC))).map(
      ({ files, circle }) => `${circle.map(name).join(' -> ')} (all in one circle: ${files.map(name).join(', ')})`,
    );
    expect(cycles).toEqual([]);
  });

  it('finds a circle and prints its path', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCycles(graph)).toEqual([
      { files: ['a.ts', 'b.ts', 'c.ts'], circle: ['a.ts', 'b.ts', 'c.ts', 'a.ts'] },
    ]);
    expect(
      importCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads every kind of import', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B } from './b.js';",
      "export { C } from './c.js';",
      "export * from './d.js';",
      "type E = import('./e.js').E;",
      "const f = () => import('./f.js');",
      "// import { G } from './g.js';",
      "import { H } from 'h';",
    ].join('\n');
    const specifiers = ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => fileName);
    expect(specifiers.sort()).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', 'h']);
  });
});
