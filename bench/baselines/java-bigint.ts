// The baseline: a naive JavaScript port of the Java reference implementation, with BigInt arithmetic, as a
// user would write it. It produces the Java preset's fingerprints (test/fingerprint/presets/java.test.ts checks the preset).
export function javaBigIntSimhash(text: string, bits: 32 | 64 | 128 = 64): bigint {
  const mask = (1n << BigInt(bits)) - 1n;
  const tokens = text.split(/[ \t\n\r\f]+/).filter((t) => t.length > 0);
  const v = new Array<number>(bits).fill(0);
  for (const t of tokens) {
    let x = BigInt(t.charCodeAt(0)) << 7n;
    for (let i = 0; i < t.length; i++) x = ((x * 1000003n) ^ BigInt(t.charCodeAt(i))) & mask;
    x ^= BigInt(t.length);
    for (let i = 0; i < bits; i++) v[i]! += (x >> BigInt(i)) & 1n ? 1 : -1;
  }
  let fp = 0n;
  for (let i = 0; i < bits; i++) if (v[i]! >= 0) fp |= 1n << BigInt(i);
  return fp;
}
