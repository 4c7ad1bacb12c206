// Loads the WebAssembly module once: picks the SIMD build where the engine validates it, else the scalar one,
// compiles it from the embedded bytes and owns its heap. Everything else asks `wasm()` for the instance.
import { SCALAR_WASM, SIMD_WASM } from './wasm-binary.js';
import { Heap } from './heap.js';

/** The exports the loader uses; each part of the library declares the kernels it calls in its own file. */
export interface Kernels {
  memory: WebAssembly.Memory;
  heapBase(): number;
  setup(): void;
}

export type Build = 'simd' | 'scalar';

export interface InitOptions {
  /** Which build to load: 'auto' (default) takes SIMD where the engine supports it. */
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

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Whether this engine validates the SIMD build (WebAssembly fixed-width SIMD). */
export function simdSupported(): boolean {
  return WebAssembly.validate(decodeBase64(SIMD_WASM));
}

function chooseBuild(options: InitOptions | undefined): Build {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError(`init options must be an object, got ${String(options)}`);
  }
  const build = options?.build ?? 'auto';
  if (build !== 'auto' && build !== 'simd' && build !== 'scalar') {
    throw new RangeError(`build must be 'auto', 'simd' or 'scalar', got ${JSON.stringify(build)}`);
  }
  if (build === 'simd' && !simdSupported()) throw new RangeError('this engine does not support WebAssembly SIMD');
  return build === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : build;
}

async function load(build: Build, compiled?: WebAssembly.Module): Promise<Runtime> {
  const module = compiled ?? (await WebAssembly.compile(decodeBase64(build === 'simd' ? SIMD_WASM : SCALAR_WASM)));
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
    loading = load(build, module);
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
