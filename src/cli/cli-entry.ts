/**
 * Everything the executable needs after its signal guard, as one module: the entry of the command's bundle
 * (dist/cli/gpumem.cjs, scripts/bundle-cli.mjs) and, where no bundle was built, what bin.ts imports instead.
 */
export { onOutputFailure } from './broken-pipe.js';
export { main } from './main.js';
