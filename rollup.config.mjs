// Bundles the tsc output (build/esm, from tsconfig.build.json) into the published dist/:
//   dist/index.mjs, dist/index.cjs  the library, one self-contained file each, WASM embedded as base64
//   dist/index.d.ts, dist/index.d.cts + dist/types/, dist/types-cjs/  declarations for import and for require
//   dist/cli.mjs                    the command-line tool (src/cli/cli.ts), importing ./index.mjs
//   dist/clickhouse.{mjs,cjs,d.ts,d.cts}  simhash-wasm/clickhouse (src/clickhouse/index.ts), Node only; imports
//                                   @clickhouse/client (an optional peer dependency) when first used
//   dist/simhash.{simd,scalar}.wasm the raw modules, for environments that load .wasm files themselves
// No rollup plugins from npm: the few file copies are small inline plugins below.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const ESM = 'build/esm';
const DIST = 'dist';

if (!fs.existsSync(`${ESM}/index.js`)) {
  throw new Error(`${ESM}/index.js is missing: run "tsc -p tsconfig.build.json" first (npm run build does)`);
}

/**
 * The declaration files reachable from index.d.ts through relative imports: internal modules whose types never
 * surface (wasm-binary.d.ts alone would add 160 KB of base64 literal types) stay out of the package.
 */
function reachableDeclarations(entry) {
  const seen = new Set();
  const pending = [entry];
  const specifier = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
  while (pending.length > 0) {
    const rel = pending.pop();
    if (seen.has(rel)) continue;
    seen.add(rel);
    const text = fs.readFileSync(path.join(ESM, rel), 'utf8');
    for (const [, spec] of text.matchAll(specifier)) {
      const target = path.join(path.dirname(rel), spec.replace(/\.js$/, '.d.ts'));
      if (!fs.existsSync(path.join(ESM, target))) throw new Error(`${rel}: cannot find the declarations of ${spec}`);
      pending.push(target);
    }
  }
  return [...seen].sort();
}

/**
 * Declarations for both module systems. Under "moduleResolution": "NodeNext" a .d.ts inside this
 * "type": "module" package describes an ES module, so `require` users get their own copy in a folder whose
 * package.json says "commonjs"; the two root files only re-export, so there is one source of truth.
 */
function declarations() {
  return {
    name: 'declarations',
    writeBundle() {
      const files = [
        ...new Set([...reachableDeclarations('index.d.ts'), ...reachableDeclarations('clickhouse/index.d.ts')]),
      ].sort();
      for (const [folder, type] of [
        ['types', null],
        ['types-cjs', 'commonjs'],
      ]) {
        fs.rmSync(path.join(DIST, folder), { recursive: true, force: true });
        for (const rel of files) {
          const to = path.join(DIST, folder, rel);
          fs.mkdirSync(path.dirname(to), { recursive: true });
          fs.copyFileSync(path.join(ESM, rel), to);
        }
        if (type) fs.writeFileSync(path.join(DIST, folder, 'package.json'), JSON.stringify({ type }) + '\n');
      }
      fs.writeFileSync(path.join(DIST, 'index.d.ts'), "export * from './types/index.js';\n");
      fs.writeFileSync(path.join(DIST, 'index.d.cts'), "export * from './types-cjs/index.js';\n");
      fs.writeFileSync(path.join(DIST, 'clickhouse.d.ts'), "export * from './types/clickhouse/index.js';\n");
      fs.writeFileSync(path.join(DIST, 'clickhouse.d.cts'), "export * from './types-cjs/clickhouse/index.js';\n");
    },
  };
}

/** The raw .wasm files, shipped beside the bundles (the bundles themselves embed the same bytes). */
function rawWasm() {
  return {
    name: 'raw-wasm',
    writeBundle() {
      for (const build of ['simd', 'scalar']) {
        fs.copyFileSync(`build/simhash.${build}.wasm`, path.join(DIST, `simhash.${build}.wasm`));
      }
    },
  };
}

/**
 * The Node-only paths (threads: 2) load node: built-ins with dynamic import(). Browser bundlers would still try
 * to resolve them (webpack fails on the node: scheme, Vite warns); these comments tell both to leave them alone.
 */
function ignoreNodeImportsInBundlers() {
  return {
    name: 'ignore-node-imports-in-bundlers',
    renderChunk(code) {
      const marked = code.replace(
        /\bimport\((['"])node:/g,
        'import(/* webpackIgnore: true */ /* @vite-ignore */ $1node:',
      );
      return marked === code ? null : { code: marked, map: null };
    },
  };
}

const onwarn = (warning) => {
  // A warning in a library build is a bug to fix, not noise to scroll past.
  throw new Error(`rollup: ${warning.message}`);
};

/** Node built-ins stay imports (the Node-only paths load them lazily, e.g. worker_threads for threads: 2). */
const external = (id) => id.startsWith('node:') || builtinModules.includes(id);

/** The ClickHouse client is the user's to install (an optional peer dependency), never bundled. */
const CLICKHOUSE_CLIENT = '@clickhouse/client';

/** The CLI loads simhash-wasm/clickhouse only for its ClickHouse commands: as ./clickhouse.mjs, not a copy. */
function clickhouseEntry() {
  const entry = path.resolve(ESM, 'clickhouse/index.js');
  return {
    name: 'clickhouse-entry',
    resolveId(source, importer) {
      if (!importer || !source.startsWith('.')) return null;
      if (path.resolve(path.dirname(importer), source) !== entry) return null;
      return { id: path.resolve(DIST, 'clickhouse.mjs'), external: true };
    },
  };
}

/**
 * The CLI shares the library rather than carrying a second copy of it (and of the embedded WASM): every library
 * module it imports becomes an import of ./index.mjs. That is only right when each name it takes is one the
 * library exports under the same name, so the library build records its modules and exports, and the CLI build
 * fails if it needs anything else.
 */
const library = { modules: new Set(), exports: new Set() };

function recordLibrary() {
  return {
    name: 'record-library',
    buildEnd() {
      for (const id of this.getModuleIds()) library.modules.add(id);
    },
    generateBundle(output, bundle) {
      if (output.format !== 'es') return;
      for (const chunk of Object.values(bundle))
        if (chunk.type === 'chunk' && chunk.isEntry) chunk.exports.forEach((e) => library.exports.add(e));
    },
  };
}

function sharedLibrary() {
  const entry = path.resolve(DIST, 'index.mjs');
  return {
    name: 'shared-library',
    resolveId(source, importer) {
      if (!importer || !source.startsWith('.')) return null;
      const id = path.resolve(path.dirname(importer), source);
      return library.modules.has(id) ? { id: entry, external: true } : null;
    },
    generateBundle(_output, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk') continue;
        const taken = chunk.importedBindings['./index.mjs'] ?? [];
        const missing = taken.filter((name) => !library.exports.has(name));
        if (missing.length > 0) {
          this.error(
            `src/cli/cli.ts imports ${missing.join(', ')} from library modules, but src/index.ts does not export them under those names`,
          );
        }
      }
    },
  };
}

export default [
  {
    input: `${ESM}/index.js`,
    onwarn,
    external,
    output: [
      { file: `${DIST}/index.mjs`, format: 'es' },
      { file: `${DIST}/index.cjs`, format: 'cjs', exports: 'named' },
    ],
    plugins: [recordLibrary(), ignoreNodeImportsInBundlers(), declarations(), rawWasm()],
  },
  {
    input: `${ESM}/clickhouse/index.js`,
    onwarn,
    external: (id) => external(id) || id === CLICKHOUSE_CLIENT,
    output: [
      { file: `${DIST}/clickhouse.mjs`, format: 'es' },
      { file: `${DIST}/clickhouse.cjs`, format: 'cjs', exports: 'named' },
    ],
  },
  // The CLI comes last: configs build in order, so the library's record is complete when the CLI is resolved.
  {
    input: `${ESM}/cli/cli.js`,
    onwarn,
    // Optional peer dependencies, loaded on first use: fzstd (a .zst input on a Node without zlib's Zstandard and
    // without the zstd program), hyparquet and its codecs and writer (Parquet tables).
    external: (id) => external(id) || ['fzstd', 'hyparquet', 'hyparquet-compressors', 'hyparquet-writer'].includes(id),
    makeAbsoluteExternalsRelative: false,
    output: {
      file: `${DIST}/cli.mjs`,
      format: 'es',
      inlineDynamicImports: true,
      paths: {
        [path.resolve(DIST, 'index.mjs')]: './index.mjs',
        [path.resolve(DIST, 'clickhouse.mjs')]: './clickhouse.mjs',
      },
    },
    plugins: [clickhouseEntry(), sharedLibrary()],
  },
];
