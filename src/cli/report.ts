// What the command line says about its inputs on stderr. A bad input (unreadable file, invalid JSON line, a
// document over the size limit) is skipped and counted, or with --strict stops the run (InputError, exit 1); a
// warning (a FIFO in a directory, a binary file, a symbolic link not followed, a repeated id) never stops it.
import { NAME } from './usage.js';

export class InputError extends Error {}

export class Reporter {
  skipped = 0;
  warnings = 0;
  constructor(private readonly strict: boolean) {}
  /** A bad input: fatal under --strict, else reported and skipped. */
  bad(message: string): void {
    if (this.strict) throw new InputError(message);
    this.skipped++;
    process.stderr.write(`${NAME}: skipped ${message}\n`);
  }
  warn(message: string): void {
    this.warnings++;
    process.stderr.write(`${NAME}: warning: ${message}\n`);
  }
}
