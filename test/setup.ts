import { init, loadedBuild } from '../src/index.js';

const build = process.env.SIMHASH_BUILD === 'scalar' ? 'scalar' : 'simd';
await init({ build });
if (loadedBuild() !== build) throw new Error(`expected the ${build} build, got ${loadedBuild()}`);
