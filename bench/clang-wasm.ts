// The native baselines' C (bench/c) compiled to WebAssembly by clang and run in the same engine as the library;
// the text kernel fed from the same JS strings with TextEncoder.encodeInto on every pass, as the library is. What
// it measures: how the library's AssemblyScript kernels compare with the C algorithms on WebAssembly itself, so
// that the distance to native C splits into what the platform costs and what our kernels cost.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TokenizerName } from '../src/index.js';

const MODES: Record<string, number> = { whitespace: 0, words: 1, shingles: 2 };

/** clang binaries to try, newest first: one on PATH, then Debian's versioned LLVM trees (which find their wasm-ld). */
function clangCandidates(): string[] {
  const llvm = fs.existsSync('/usr/lib')
    ? fs
        .readdirSync('/usr/lib')
        .filter((d) => /^llvm-\d+$/.test(d))
        .sort((a, b) => Number(b.slice(5)) - Number(a.slice(5)))
        .map((d) => `/usr/lib/${d}/bin/clang`)
        .filter((f) => fs.existsSync(f))
    : [];
  return ['clang', ...llvm];
}

/**
 * Compiles bench/c/`name`.c to `dir`/`name`.wasm; returns the compiler's version line and the module bytes, or
 * undefined (rows skipped, reason on stderr) when no clang with a wasm32 target and wasm-ld is installed.
 */
export function compileClangWasm(
  dir: string,
  name: 'fingerprint' | 'hamming',
): { compiler: string; bytes: Uint8Array<ArrayBuffer> } | undefined {
  const source = new URL(`./c/${name}.c`, import.meta.url).pathname;
  const out = path.join(dir, `${name}.wasm`);
  const flags = ['--target=wasm32', '-O3', '-msimd128', '-mbulk-memory', '-nostdlib', '-DREDUCER_PLANES'];
  const link = ['-Wl,--no-entry', '-Wl,--export-memory'];
  let lastError = 'no clang found';
  for (const clang of clangCandidates()) {
    try {
      execFileSync(clang, [...flags, ...link, '-o', out, source], { stdio: ['ignore', 'ignore', 'pipe'] });
      const compiler = execFileSync(clang, ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
      return { compiler, bytes: fs.readFileSync(out) };
    } catch (error) {
      lastError = (error as Error).message.split('\n')[0]!;
    }
  }
  console.error(`clang WebAssembly baseline (${name}) skipped: ${lastError}`);
  return undefined;
}

/** Grows a module's memory so that it reaches at least `end` bytes (the layouts below are laid out first). */
export function growMemory(memory: WebAssembly.Memory, end: number): void {
  const missing = end - memory.buffer.byteLength;
  if (missing > 0) memory.grow(Math.ceil(missing / 65536));
}

interface KernelExports {
  memory: WebAssembly.Memory;
  heap(): number;
  pass(mode: number, docs: number, n: number, work: number, out: number): void;
}

/** One instance of the C module with room for `docs` (ASCII strings): `run(mode)` fingerprints all of them. */
export class ClangFingerprinter {
  private readonly x: KernelExports;
  private readonly docTable: number;
  private readonly text: number;
  private readonly work: number;
  private readonly out: number;
  private readonly encoder = new TextEncoder();

  constructor(
    bytes: Uint8Array<ArrayBuffer>,
    private readonly docs: readonly string[],
  ) {
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as unknown as KernelExports;
    let top = (this.x.heap() + 63) & ~63;
    const alloc = (size: number) => {
      const at = top;
      top = (top + size + 63) & ~63;
      return at;
    };
    const total = docs.reduce((a, d) => a + d.length, 0);
    const longest = docs.reduce((a, d) => Math.max(a, d.length), 0);
    const room = longest + 16 + 64; // FLATTEN offsets of slack, as the C program allocates
    this.docTable = alloc(8 * docs.length); // { const uint8_t *text; size_t len } on wasm32
    this.text = alloc(total + 128) + 64; // 64 bytes of slack on both sides for the hashes' reads
    this.out = alloc(8 * docs.length);
    this.work = alloc(20);
    const arrays = [alloc(4 * room), alloc(4 * room), alloc(8 * room), alloc(8 * room), alloc(longest + 192) + 64];
    growMemory(this.x.memory, top + 1024);
    new Uint32Array(this.x.memory.buffer, this.work, 5).set(arrays);
  }

  /** Fingerprints every document (64-bit, unit weights) from its string; returns a view of the results. */
  run(tokenizer: TokenizerName): BigUint64Array {
    const mode = MODES[tokenizer];
    if (mode === undefined) throw new RangeError(`the C kernel has no tokenizer ${tokenizer}`);
    const buffer = this.x.memory.buffer;
    const table = new Uint32Array(buffer, this.docTable, 2 * this.docs.length);
    const bytes = new Uint8Array(buffer);
    let at = this.text;
    for (let i = 0; i < this.docs.length; i++) {
      const { read, written } = this.encoder.encodeInto(this.docs[i]!, bytes.subarray(at));
      if (read !== this.docs[i]!.length || written !== read) throw new RangeError(`document ${i} is not ASCII`);
      table[2 * i] = at;
      table[2 * i + 1] = written;
      at += written;
    }
    this.x.pass(mode, this.docTable, this.docs.length, this.work, this.out);
    return new BigUint64Array(buffer, this.out, this.docs.length);
  }
}
