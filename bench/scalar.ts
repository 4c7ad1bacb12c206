// Child process of bench/run.ts: the fingerprint benchmark on the scalar build, as JSON on stdout.
import { run } from './fingerprint.bench.js';

process.stdout.write(JSON.stringify(await run()));
