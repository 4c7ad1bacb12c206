// The java preset: bit-exact with the Java reference implementation this project started from (its outputs are
// test/vectors/original/seed-java.jsonl). Tokens are split on " \t\n\r\f" only; a token's hash is the Python-2-style
// multiply-by-1000003 string hash over UTF-16 code units, so strings go to assembly/presets/java.ts as code
// units; ties set the bit and an empty document is all ones. Feature lists follow the default preset's rules.
import { show } from '../../errors.js';
import { encodeUtf16, regions } from '../../runtime/marshal.js';
import type { Runtime } from '../../runtime/wasm.js';
import type { Plan, TokenizerFunction, TokenizerName } from '../options.js';
import { collectFeatures, type FeatureKernel, layoutFeatures, layoutTexts, mapFeatures } from './default.js';
import type { FeatureDoc, KernelOutput, PresetDefinition } from './preset.js';

interface JavaKernels {
  javaTexts(text: number, offsets: number, count: number, bits: number, out: number, counts: number): void;
  javaFeatures: FeatureKernel;
}

function kernels(rt: Runtime): JavaKernels {
  return rt.kernels as unknown as JavaKernels;
}

export const javaPreset: PresetDefinition = {
  spec: 0,
  defaultTokenizer: 'whitespace',
  checkOptions() {},
  checkTokenizer(tokenizer: TokenizerName | TokenizerFunction) {
    if (tokenizer !== 'whitespace' && typeof tokenizer !== 'function') {
      throw new RangeError(`preset 'java' tokenizes on whitespace only, got tokenizer ${show(tokenizer)}`);
    }
  },
  textsAsStrings: true,
  collectFeatures,
  mapFeatures,

  runTexts(rt: Runtime, texts: ReadonlyArray<string | Uint8Array>, plan: Plan): KernelOutput {
    const b = layoutTexts(rt, encodeUtf16(rt.heap, regions(rt).text, texts as readonly string[]), plan.bits);
    kernels(rt).javaTexts(b.bytes, b.offsets, b.count, plan.bits, b.out, b.counts);
    return b;
  },

  runFeatures(rt: Runtime, docs: readonly FeatureDoc[], plan: Plan): KernelOutput {
    const b = layoutFeatures(rt, docs, plan.bits, encodeUtf16);
    kernels(rt).javaFeatures(b.bytes, b.featOffsets, b.docOffsets, b.count, b.weights, plan.bits, b.out, b.counts);
    return { out: b.out, counts: b.counts };
  },
};
