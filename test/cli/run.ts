// Runs the CLI from its TypeScript source as users run the binary: a subprocess with arguments and stdin.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The CLI's source, which the tests run as users run the binary. */
export const cliSource = path.join(root, 'src/cli/cli.ts');
/** tsx's loader for `node --import`, by URL, so the sources also run from another working directory. */
export const tsxLoader = pathToFileURL(path.join(root, 'node_modules/tsx/dist/loader.mjs')).href;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  options: { input?: string; cwd?: string; timeout?: number; env?: NodeJS.ProcessEnv } = {},
): RunResult {
  const r = spawnSync(process.execPath, ['--import', tsxLoader, cliSource, ...args], {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    input: options.input,
    encoding: 'utf8',
    timeout: options.timeout ?? 120_000,
    maxBuffer: 256 << 20,
  });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The JSON values of a run's JSON Lines output (clusters, pairs), one per line. */
export function jsonLines(stdout: string) {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}
