// Helpers for what the command line prints: names made safe for line-based text, CSV cells, and a buffered
// writer to stdout that waits when the pipe is full, so output of any size streams in bounded memory.
import { InputError } from './report.js';

/** The start of a document on one line, for the summary. */
export function snippet(text: string | Uint8Array): string {
  const t = (typeof text === 'string' ? text.slice(0, 400) : new TextDecoder().decode(text.subarray(0, 400)))
    .replace(/\s+/g, ' ')
    .trim();
  return escapeControls(t.length > 90 ? `${t.slice(0, 90)}…` : t);
}

// C0 and C1 controls, DEL, the line and paragraph separators and the bidirectional overrides and isolates: any of
// them in a file name could break a line of output apart or make it display as something else.
function unsafe(c: number): boolean {
  return (
    c < 0x20 ||
    (c >= 0x7f && c <= 0x9f) ||
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069)
  );
}

function hasUnsafe(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (unsafe(s.charCodeAt(i))) return true;
  return false;
}

function escapeControls(s: string): string {
  if (!hasUnsafe(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += unsafe(c) ? `\\u${c.toString(16).padStart(4, '0')}` : s[i];
  }
  return out;
}

/**
 * A file name for text output: as it is, unless it holds an unsafe character or starts with a double quote;
 * then as a JSON string literal (quoted, with \n, \t, \u… escapes), so each name stays on its own line and reads
 * back unambiguously.
 */
export function escapeName(name: string): string {
  if (!hasUnsafe(name) && !name.startsWith('"')) return name;
  return escapeControls(JSON.stringify(name));
}

/**
 * A CSV cell (RFC 4180 quoting). A cell that a spreadsheet would run as a formula (starting with =, +, -, @, tab
 * or carriage return) is neutralised with a leading apostrophe, as OWASP recommends.
 */
export function csvField(s: string): string {
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Writes to stdout through a buffer of about 1 MB; `line` waits only when the pipe is full. */
export class Output {
  private parts: string[] = [];
  private size = 0;
  async line(text: string): Promise<void> {
    this.parts.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= 1 << 20) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.size === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    await write(text);
  }
}

export async function write(text: string): Promise<void> {
  if (text === '') return;
  try {
    await new Promise<void>((resolve, reject) => {
      process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
    });
  } catch (error) {
    // A full disk or a broken device is the user's to fix: a message, not a stack trace. EPIPE (the reader left,
    // as `| head` does) ends the run quietly, in cli.ts.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || code === 'EPIPE') throw error;
    throw new InputError(`cannot write standard output: ${(error as Error).message}`);
  }
}

export function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`;
}
