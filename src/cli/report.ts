// What the command line says about its inputs on stderr. A bad input (unreadable file, invalid JSON line, a
// document over the size limit) is skipped and counted, or with --strict stops the run (InputError, exit 1); a
// warning (a FIFO in a directory, a binary file, a symbolic link not followed, a repeated id) never stops it; a note
// (a file reached by two paths) changes nothing asked for. Each message is counted under its reason, and once the
// inputs are read, `summary()` says how many of each there were. --quiet keeps all of them off stderr: only errors
// that stop the run are printed.
//
// Here too are what every message begins with, the command's name, and the two errors that stop a run, which cli.ts
// turns into exit codes: InputError (1) and UsageError (2: a bad argument, from usage.ts, or inputs that cannot go
// together, from inputs.ts). This file imports nothing of the command line's, so every part of it can use them.

export const NAME = 'simhash-wasm';

export class InputError extends Error {}

/** What a failed read says in a report: the system's code (ENOENT, EACCES, ...), else the message. */
export function errorCode(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ?? e.message ?? String(error);
}

export class UsageError extends Error {}

/**
 * Messages of one reason shown on stderr; the rest are counted in the closing line. A wrong --field on a corpus of
 * millions of lines would otherwise print millions of lines.
 */
export const MESSAGES_SHOWN = 100;

export class Reporter {
  skipped = 0;
  warnings = 0;
  /** Messages by reason, in the order the reasons first came. */
  private readonly reasons = new Map<string, number>();
  /** Messages shown by reason. */
  private readonly shown = new Map<string, number>();

  constructor(
    private readonly strict: boolean,
    private readonly quiet = false,
  ) {}

  /** A bad input: fatal under --strict, else reported and skipped. */
  bad(message: string, reason = 'unusable inputs'): void {
    if (this.strict) throw new InputError(message);
    this.skipped++;
    this.say(`skipped ${message}`, reason);
  }

  warn(message: string, reason = 'other warnings'): void {
    this.warnings++;
    this.say(`warning: ${message}`, reason);
  }

  /** Something the user may want to know that changes nothing they asked for (a file reached by two paths). */
  note(message: string, reason = 'notes'): void {
    this.say(`note: ${message}`, reason);
  }

  /** Counts more of a reason without a message each (a repeat past the ones shown). */
  count(reason: string, n = 1): void {
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + n);
  }

  /** A message not counted under any reason (unless quiet). */
  tell(message: string): void {
    if (!this.quiet) process.stderr.write(`${NAME}: ${message}\n`);
  }

  get isQuiet(): boolean {
    return this.quiet;
  }

  /** How many messages of each reason there were, as "2 invalid JSON lines; 1 binary files" ('' for none). */
  get reasonCounts(): string {
    return [...this.reasons].map(([reason, n]) => `${n} ${reason}`).join('; ');
  }

  /** Says, in one line, how many messages of each reason there were (nothing when there were none, or quiet). */
  summary(): void {
    if (this.quiet || this.reasons.size === 0) return;
    process.stderr.write(`${NAME}: not read or noted: ${this.reasonCounts}\n`);
  }

  private say(message: string, reason: string): void {
    this.count(reason);
    if (this.quiet) return;
    const shown = (this.shown.get(reason) ?? 0) + 1;
    this.shown.set(reason, shown);
    if (shown <= MESSAGES_SHOWN) process.stderr.write(`${NAME}: ${message}\n`);
    else if (shown === MESSAGES_SHOWN + 1)
      process.stderr.write(`${NAME}: further ${reason} are not shown one by one: the closing line counts them all\n`);
  }
}
