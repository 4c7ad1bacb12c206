// Plain text of a man page's roff source, for the real-text benchmark corpus (bench/real-corpus.ts). Not a
// renderer: requests that only lay out text are dropped, text-bearing macros (.SH, .B, .IR, mdoc's .Nm, .Fl, ...)
// keep their arguments, and inline escapes become the characters they stand for or nothing. Rendering 20,000 pages
// with man(1) takes minutes; this takes about a second and leaves the words and sentences as written.

/** Requests whose arguments are not running text. */
const LAYOUT = new Set(
  (
    'TH Dd Dt Os de am ds as nr rr rm rn so ig if ie el tr ft ps vs in ti ta ll nh hy ad na ne fi nf ' +
    'sp br bp PD RS RE PP LP P IP HP TP TQ UR UE MT ME EX EE SY YS OP mso cc c2 ec eo ev fam fc hc hw ' +
    'ns rs lf pc pn po pl sv os ch wh it mk rt Bd Ed Bl El Bf Ef Bk Ek Sm'
  ).split(' '),
);

const NAMED: Record<string, string> = {
  em: '—',
  en: '–',
  hy: '-',
  aq: "'",
  dq: '"',
  lq: '“',
  rq: '”',
  oq: '‘',
  cq: '’',
  bu: '•',
  co: '©',
  rg: '®',
  tm: '™',
  mu: '×',
  de: '°',
  '<=': '≤',
  '>=': '≥',
  '->': '→',
  '<-': '←',
  ti: '~',
  ha: '^',
  rs: '\\',
};

function inline(line: string): string {
  return line
    .replace(/\\f(\[[^\]]*\]|\(..|.)/g, '') // font changes
    .replace(/\\s[-+]?(\d|\(\d\d|\[\d+\])/g, '') // size changes
    .replace(/\\\*(\[[^\]]*\]|\(..|.)/g, '') // string interpolations
    .replace(/\\n(\[[^\]]*\]|\(..|.)/g, '') // number registers
    .replace(/\\\((..)/g, (_, name: string) => NAMED[name] ?? ' ')
    .replace(/\\\[([^\]]*)\]/g, (_, name: string) => NAMED[name] ?? ' ')
    .replace(/\\[&c%:),/]/g, '')
    .replace(/\\[-e]/g, (m) => (m === '\\-' ? '-' : '\\'))
    .replace(/\\[ ~0|^]/g, ' ')
    .replace(/\\"(.*)$/, '') // comment to end of line
    .replace(/\\(.)/g, '$1');
}

/** Strips quotes around macro arguments: `.B "a b" c` → `a b c`. */
function argumentsOf(rest: string): string {
  return rest.replace(/"([^"]*)"/g, '$1');
}

export function roffToText(source: string): string {
  const out: string[] = [];
  let skipUntilDots = false;
  for (const raw of source.split('\n')) {
    if (skipUntilDots) {
      if (/^\.\.\s*$/.test(raw)) skipUntilDots = false;
      continue;
    }
    if (/^[.']\s*\\"/.test(raw) || /^\\"/.test(raw)) continue; // comments
    const request = /^[.']\s*([^\s\\]+)\s*(.*)$/.exec(raw);
    if (!request) {
      out.push(inline(raw));
      continue;
    }
    const [, name = '', rest = ''] = request;
    if (name === 'de' || name === 'am' || name === 'ig') {
      skipUntilDots = true;
      continue;
    }
    if (name === 'SH' || name === 'SS' || name === 'Sh' || name === 'Ss' || name === 'PP' || name === 'LP') {
      out.push('');
      if (rest) out.push(inline(argumentsOf(rest)));
      continue;
    }
    if (LAYOUT.has(name)) continue;
    if (rest) out.push(inline(argumentsOf(rest)));
  }
  return out
    .join('\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
