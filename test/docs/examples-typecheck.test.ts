// The TypeScript examples users copy type-check against the library's sources: every ```ts block of the README and
// docs/, and every ```ts block inside an `@example` of the public sources' TSDoc (what the API reference shows).
// `simhash-wasm` and `simhash-wasm/clickhouse` resolve to src/index.ts and src/clickhouse/index.ts, so an example
// that uses a name the package does not export, or calls it with the wrong types, fails here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ONCE } from '../e2e/gate.js';
import { fencedBlocks } from '../markdown.js';

const root = path.resolve(import.meta.dirname, '../..');

interface Example {
  where: string;
  code: string;
}

function markdownExamples(file: string): Example[] {
  return fencedBlocks(fs.readFileSync(path.join(root, file), 'utf8'))
    .filter((b) => b.lang === 'ts')
    .map((b) => ({ where: `${file}:${b.line}`, code: b.body }));
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

/** ```ts blocks inside TSDoc comments (the lines' leading " * " removed). */
export function tsdocExamples(file: string, text: string): Example[] {
  const out: Example[] = [];
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const lines = comment[0].split('\n').map((l) => l.replace(/^\s*\* ?/, ''));
    const body = lines.join('\n');
    for (const block of fencedBlocks(body)) {
      if (block.lang === 'ts')
        out.push({ where: `${file}:${text.slice(0, comment.index).split('\n').length}`, code: block.body });
    }
  }
  return out;
}

function allExamples(): Example[] {
  const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith('.md'),
  );
  const sources = sourceFiles('src').flatMap((f) => tsdocExamples(f, fs.readFileSync(path.join(root, f), 'utf8')));
  return [...docs.flatMap(markdownExamples), ...sources];
}

/** Diagnostics of the examples, each compiled as its own module. */
function typeCheck(examples: Example[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-examples-'));
  try {
    const files = examples.map((example, i) => {
      const file = path.join(dir, `example-${i}.mts`);
      // A block without import/export would be a script sharing one scope with the others.
      fs.writeFileSync(
        file,
        /^\s*(import|export)\s/m.test(example.code) ? example.code : `${example.code}\nexport {};\n`,
      );
      return file;
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      typeRoots: [path.join(root, 'node_modules/@types')],
      skipLibCheck: true,
      paths: {
        'simhash-wasm': [path.join(root, 'src/index.ts')],
        'simhash-wasm/clickhouse': [path.join(root, 'src/clickhouse/index.ts')],
      },
      allowImportingTsExtensions: true,
    });
    return ts.getPreEmitDiagnostics(program).flatMap((d) => {
      if (!d.file || !files.includes(d.file.fileName))
        return d.file ? [] : [ts.flattenDiagnosticMessageText(d.messageText, '\n')];
      const example = examples[files.indexOf(d.file.fileName)]!;
      const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1;
      return [
        `${example.where} (line ${line} of the example): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      ];
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(ONCE)('documentation examples', () => {
  it('finds the examples of the README, docs/ and TSDoc', () => {
    expect(allExamples().length).toBeGreaterThanOrEqual(5);
  });

  it('type-check against the sources', () => {
    expect(typeCheck(allExamples())).toEqual([]);
  }, 120_000);

  it('fails on an example that uses the API wrongly', () => {
    const wrong = [
      { where: 'wrong-1', code: "import { simhash } from 'simhash-wasm';\nconst x: string = simhash('a');\n" },
      { where: 'wrong-2', code: "import { notAnExport } from 'simhash-wasm';\nnotAnExport();\n" },
    ];
    const errors = typeCheck(wrong);
    expect(errors.some((e) => e.startsWith('wrong-1'))).toBe(true);
    expect(errors.some((e) => e.startsWith('wrong-2'))).toBe(true);
  }, 120_000);

  it('reads ```ts blocks out of TSDoc comments', () => {
    const text = '/**\n * Hashes.\n * @example\n * ```ts\n * const a = 1;\n * ```\n */\nexport const x = 1;\n';
    expect(tsdocExamples('x.ts', text)).toEqual([{ where: 'x.ts:1', code: 'const a = 1;\n' }]);
  });
});
