// Loads the WebAssembly module once: picks the SIMD build where the engine validates SIMD, else the scalar one,
// compiles it from the embedded bytes and owns its heap. Everything else asks `wasm()` for the instance.
//
// The bytes live in their own module (wasm-binary, gzip then base64), imported only here and only when init()
// compiles: the package ships it once as dist/wasm.mjs, shared by its ESM and CJS entries, and pool workers, which
// receive the compiled module, never load it.
import { Heap } from './heap.js';

/** The exports the loader uses; each part of the library declares the kernels it calls in its own file. */
export interface Kernels {
  memory: WebAssembly.Memory;
  heapBase(): number;
  setup(): void;
}

/** Which WebAssembly build runs: 'simd' (fixed-width SIMD kernels) or 'scalar' (for engines without SIMD). Both give identical results. */
export type Build = 'simd' | 'scalar';

/** Options of init(). */
export interface InitOptions {
  /**
   * Which build to load: 'auto' (default) takes SIMD where the engine supports it, falling back to scalar. 'simd'
   * on an engine without SIMD is a RangeError, as is any other value.
   */
  build?: 'auto' | Build;
}

export interface Runtime {
  readonly kernels: Kernels;
  readonly heap: Heap;
  readonly build: Build;
  /** The compiled module: pool workers instantiate this one rather than compiling the bytes again. */
  readonly module: WebAssembly.Module;
}

let runtime: Runtime | undefined;
let loading: Promise<Runtime> | undefined;
let loadingBuild: Build | undefined;

interface Base64Decoders {
  Uint8Array: { fromBase64?(text: string): Uint8Array<ArrayBuffer> };
  Buffer?: { from(text: string, encoding: 'base64'): Uint8Array<ArrayBuffer> };
}

/** Native decoders where there are (Uint8Array.fromBase64, Node's Buffer), else atob. */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const native = globalThis as unknown as Base64Decoders;
  if (native.Uint8Array.fromBase64) return native.Uint8Array.fromBase64(text);
  if (native.Buffer) return native.Buffer.from(text, 'base64');
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

interface NodeZlib {
  gunzipSync(data: Uint8Array): Uint8Array<ArrayBuffer>;
}

/** node:zlib where this is Node (Bun and Deno have it too): its gunzip is immediate. */
async function nodeZlib(): Promise<NodeZlib | undefined> {
  const proc = (globalThis as { process?: { versions?: { node?: string }; getBuiltinModule?(id: string): unknown } })
    .process;
  if (typeof proc?.versions?.node !== 'string') return undefined;
  return (proc.getBuiltinModule?.('node:zlib') as NodeZlib | undefined) ?? ((await import('node:zlib')) as NodeZlib);
}

/**
 * The embedded build's bytes: base64 of gzip. Node's zlib inflates them in well under a millisecond, where its
 * DecompressionStream took 25-45 ms the first time (it loads the web streams); browsers use DecompressionStream.
 */
async function moduleBytes(build: Build): Promise<Uint8Array<ArrayBuffer>> {
  const { SCALAR_WASM_GZ, SIMD_WASM_GZ } = await import('./wasm-binary.js');
  const gz = decodeBase64(build === 'simd' ? SIMD_WASM_GZ : SCALAR_WASM_GZ);
  const zlib = await nodeZlib();
  if (zlib) return zlib.gunzipSync(gz);
  const inflated = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

/**
 * The smallest module that uses fixed-width SIMD (a function returning i8x16.popcnt(i8x16.splat(0)), the probe of
 * wasm-feature-detect): engines validate SIMD as a whole proposal, so this answers for the SIMD build without
 * decoding it. Should an engine accept the probe yet reject the build, init() falls back to scalar (see load).
 */
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

let simd: boolean | undefined;

/** Whether this engine supports WebAssembly fixed-width SIMD, which the SIMD build needs. */
export function simdSupported(): boolean {
  simd ??= WebAssembly.validate(SIMD_PROBE);
  return simd;
}

function chooseBuild(options: InitOptions | undefined): Build {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError(`init options must be an object, got ${String(options)}`);
  }
  // A misspelt build would load the default one without a word.
  for (const key of Object.keys(options ?? {}))
    if (key !== 'build') throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  const build = options?.build ?? 'auto';
  if (build !== 'auto' && build !== 'simd' && build !== 'scalar') {
    throw new RangeError(`build must be 'auto', 'simd' or 'scalar', got ${JSON.stringify(build)}`);
  }
  if (build === 'simd' && !simdSupported()) throw new RangeError('this engine does not support WebAssembly SIMD');
  return build === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : build;
}

async function compile(build: Build): Promise<WebAssembly.Module> {
  return WebAssembly.compile(await moduleBytes(build));
}

async function load(build: Build, compiled?: WebAssembly.Module, auto = false): Promise<Runtime> {
  let module = compiled;
  if (module === undefined) {
    try {
      module = await compile(build);
    } catch (error) {
      if (!(auto && build === 'simd' && error instanceof WebAssembly.CompileError)) throw error;
      build = 'scalar';
      module = await compile(build);
    }
  }
  const instance = await WebAssembly.instantiate(module, {});
  const kernels = instance.exports as unknown as Kernels;
  kernels.setup();
  return { kernels, heap: new Heap(kernels.memory, kernels.heapBase()), build, module };
}

/**
 * Compiles and instantiates the WebAssembly module; call (and await) it once before anything else.
 * Later calls return the same instance. Asking for a different build than the one loaded is an error.
 */
export async function init(options?: InitOptions): Promise<void> {
  return initWith(chooseBuild(options), options?.build);
}

/**
 * A pool worker's init: the main thread's compiled module of `build`, instantiated here. In V8 a module posted to
 * a worker shares its compiled code, including what the main thread has already optimized, so the worker's
 * first task does not run baseline code or wait for a compile of its own.
 */
export async function initWithModule(module: WebAssembly.Module, build: Build): Promise<void> {
  return initWith(build, build, module);
}

async function initWith(build: Build, asked: InitOptions['build'], module?: WebAssembly.Module): Promise<void> {
  const current = runtime?.build ?? loadingBuild;
  if (current !== undefined) {
    if (asked !== undefined && asked !== 'auto' && asked !== current) {
      throw new Error(`simhash-wasm is already initialized with the ${current} build`);
    }
    if (runtime) return;
  } else {
    loadingBuild = build;
    loading = load(build, module, asked === undefined || asked === 'auto');
  }
  try {
    runtime = await loading!;
  } catch (error) {
    loading = undefined;
    loadingBuild = undefined;
    throw error;
  }
}

/** The loaded module; throws when `init()` has not finished. */
export function wasm(): Runtime {
  if (!runtime) throw new Error('simhash-wasm is not initialized: await init() first');
  return runtime;
}

/** The compiled module in use, or undefined before init(). */
export function loadedModule(): WebAssembly.Module | undefined {
  return runtime?.module;
}

/** The build in use ('simd' or 'scalar'), or undefined before init(). */
export function loadedBuild(): Build | undefined {
  return runtime?.build;
}
