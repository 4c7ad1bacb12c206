// Child process of bench/index.ts: the fingerprint benchmark on the scalar build, as JSON on stdout.
import { run } from './fingerprint.bench.js';

process.stdout.write(JSON.stringify(await run()));
