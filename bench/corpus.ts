// Benchmark input: real English text (the bundled license sample), repeated to the requested size, and random
// fingerprints.
import fs from 'node:fs';

export function englishText(bytes: number): string {
  const file = new URL('../data/sample/licenses.jsonl', import.meta.url);
  let text = '';
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    text += (JSON.parse(line) as { text: string }).text + '\n';
    if (text.length > bytes) break;
  }
  while (text.length < bytes) text += text;
  return text.slice(0, bytes);
}

export function englishDocuments(count: number): string[] {
  const file = new URL('../data/sample/licenses.jsonl', import.meta.url);
  const docs = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text);
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) out.push(docs[i % docs.length]!);
  return out;
}

/** `words` random 64-bit words (xorshift32, deterministic per seed): n 64-bit or n/2 128-bit fingerprints. */
export function randomWords(words: number, seed: number): BigUint64Array {
  const fps = new BigUint64Array(words);
  const u32 = new Uint32Array(fps.buffer);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < u32.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    u32[i] = x >>> 0;
  }
  return fps;
}
