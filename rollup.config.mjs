// Bundles the tsc output (build/esm, from tsconfig.build.json) into the published dist/:
//   dist/index.mjs, dist/index.cjs  the library, one file each (whitespace and syntax minified, names kept)
//   dist/wasm.mjs                   the two WebAssembly builds (gzip, base64), once: both entries import() it
//                                   when init() compiles, so no bundler setup or file access is needed
//   dist/index.d.cts                the public declarations in one file, for import and for require
//   dist/cli.mjs                    the command-line tool (src/cli/cli.ts), importing ./index.mjs
//   dist/clickhouse.{mjs,cjs,d.cts}  simhash-wasm/clickhouse (src/clickhouse/index.ts), Node only; imports
//                                   @clickhouse/client (an optional peer dependency) when first used
// Plugins from npm: rollup-plugin-dts (declarations) and esbuild's transform (minifying); the few file copies are
// small inline plugins below.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { transform } from 'esbuild';
import { dts } from 'rollup-plugin-dts';

const ESM = 'build/esm';
const DIST = 'dist';

if (!fs.existsSync(`${ESM}/index.js`)) {
  throw new Error(`${ESM}/index.js is missing: run "tsc -p tsconfig.build.json" first (npm run build does)`);
}

/**
 * The embedded WebAssembly (build/esm/runtime/wasm-binary.js) is not bundled into either entry: both import() the
 * one dist/wasm.mjs, which this copies. An ES module, so that ESM in browsers loads it as is; CJS in Node and
 * bundlers import() it too.
 */
const WASM_BINARY = path.resolve(ESM, 'runtime/wasm-binary.js');

function sharedWasm() {
  return {
    name: 'shared-wasm',
    resolveId(source, importer) {
      if (!importer || !source.startsWith('.')) return null;
      return path.resolve(path.dirname(importer), source) === WASM_BINARY ? { id: './wasm.mjs', external: true } : null;
    },
    writeBundle() {
      fs.copyFileSync(WASM_BINARY, path.join(DIST, 'wasm.mjs'));
    },
  };
}

/**
 * Whitespace and syntax minified, identifiers kept: a third of the size, while stack traces and a debugger still
 * show the library's own names. The format is left as rollup wrote it.
 */
function minify() {
  return {
    name: 'minify',
    async renderChunk(code) {
      // Lines of at most about 120 characters: an uncaught error makes Node print the line it was thrown from.
      const out = await transform(code, { loader: 'js', minifyWhitespace: true, minifySyntax: true, lineLimit: 120 });
      return { code: out.code, map: null };
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
    // minify runs first: it drops comments, and the bundler hints are comments.
    plugins: [sharedWasm(), recordLibrary(), minify(), ignoreNodeImportsInBundlers()],
  },
  {
    input: `${ESM}/clickhouse/index.js`,
    onwarn,
    external: (id) => external(id) || id === CLICKHOUSE_CLIENT,
    output: [
      { file: `${DIST}/clickhouse.mjs`, format: 'es' },
      { file: `${DIST}/clickhouse.cjs`, format: 'cjs', exports: 'named' },
    ],
    plugins: [minify()],
  },
  // The declarations: one file per entry with only what the public entry exposes (rollup-plugin-dts follows the
  // exports and leaves internal modules out), for import and require alike. They are .d.cts (CommonJS) because
  // both module systems may load a CommonJS declaration: an ES one would fail `require` under "module": "Node16"
  // (TS1471) and on TypeScript before 5.8. The library has only named exports, which read the same from either.
  ...['index', 'clickhouse'].map((entry) => ({
    input: `${ESM}/${entry === 'index' ? 'index' : 'clickhouse/index'}.d.ts`,
    onwarn,
    external,
    output: { file: `${DIST}/${entry}.d.cts`, format: 'es' },
    plugins: [dts({ respectExternal: false })],
  })),
  // The CLI comes last: configs build in order, so the library's record is complete when the CLI is resolved.
  {
    input: `${ESM}/cli/cli.js`,
    onwarn,
    // Optional peer dependencies, loaded on first use: fzstd (a .zst input on a Node without zlib's Zstandard and
    // without the zstd program), hyparquet and its codecs and writer (Parquet tables), zstddec (Parquet's
    // Zstandard pages on a Node without zlib's).
    external: (id) =>
      external(id) || ['fzstd', 'hyparquet', 'hyparquet-compressors', 'hyparquet-writer', 'zstddec'].includes(id),
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
    plugins: [clickhouseEntry(), sharedLibrary(), minify()],
  },
];
