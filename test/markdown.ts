// Fenced code blocks of a markdown text (a README, a docs/ page, a TSDoc comment's body), for the tests that run or
// type-check the documentation's examples.

export interface FencedBlock {
  /** The info string after the opening fence: 'ts', 'sh', 'text', or '' for none. */
  lang: string;
  body: string;
  /** The line (from 1) of the opening fence. */
  line: number;
}

/** Every fenced block, in order: an opening ``` line with its info string, up to a line that is only ```. */
export function fencedBlocks(text: string): FencedBlock[] {
  return [...text.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1]!,
    body: m[2]!,
    line: text.slice(0, m.index).split('\n').length,
  }));
}
