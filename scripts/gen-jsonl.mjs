// Writes a generated JSON Lines corpus of a given size for the streaming benchmark (bench/stream.bench.ts):
//   node scripts/gen-jsonl.mjs OUT.jsonl SIZE_MB [SEED]
// Each line is {"id": N, "text": "..."}: 300-1,000 words (about 2-6 KB) drawn from a 50,000-word vocabulary
// with a Zipf-like skew; 3 % of documents are edited copies of one of the previous 1,000 documents (words replaced,
// inserted or dropped at a rate of 2-10 %), so the corpus has near-duplicates to find. Deterministic for a seed.
// The file is large: write it under /tmp, never into the repository, and delete it after use.
import fs from 'node:fs';

const [out, sizeArg, seedArg] = process.argv.slice(2);
if (!out || !sizeArg) {
  console.error('usage: node scripts/gen-jsonl.mjs OUT.jsonl SIZE_MB [SEED]');
  process.exit(2);
}
const target = Number(sizeArg) * 1e6;
let state = Number(seedArg ?? 1) >>> 0 || 1;
/** mulberry32 */
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const VOCABULARY = 50_000;
const letters = 'etaoinshrdlcumwfgypbvkjxqz';
const vocabulary = [];
for (let i = 0; i < VOCABULARY; i++) {
  const length = 2 + Math.floor(random() * 9);
  let w = '';
  for (let j = 0; j < length; j++) w += letters[Math.floor(random() ** 1.5 * letters.length)];
  vocabulary.push(w);
}
const word = () => vocabulary[Math.floor(random() ** 3 * VOCABULARY)];

function fresh() {
  const n = 300 + Math.floor(random() * 700);
  const words = new Array(n);
  for (let i = 0; i < n; i++) words[i] = word();
  return words;
}

function edited(words) {
  const rate = 0.02 + random() * 0.08;
  const copy = [];
  for (const w of words) {
    const r = random();
    if (r < rate / 3) continue; // dropped
    if (r < (2 * rate) / 3)
      copy.push(word()); // replaced
    else copy.push(w);
    if (r > 1 - rate / 3) copy.push(word()); // inserted
  }
  return copy;
}

const recent = [];
const fd = fs.openSync(out, 'w');
let written = 0;
let id = 0;
let parts = [];
let pending = 0;
while (written + pending < target) {
  const words = recent.length > 0 && random() < 0.03 ? edited(recent[Math.floor(random() * recent.length)]) : fresh();
  if (recent.length < 1000) recent.push(words);
  else recent[Math.floor(random() * 1000)] = words;
  const line = `{"id":${id++},"text":${JSON.stringify(words.join(' '))}}\n`;
  parts.push(line);
  pending += line.length;
  if (pending >= 8 << 20) {
    written += fs.writeSync(fd, parts.join(''));
    parts = [];
    pending = 0;
  }
}
written += fs.writeSync(fd, parts.join(''));
fs.closeSync(fd);
console.log(`${out}: ${id} documents, ${(written / 1e6).toFixed(1)} MB`);
