#!/usr/bin/env node
/** Entry point of the `gpumem` executable: the only module that ends the process or sets its exit status. */
import { brokenPipeEndsGpumem } from './broken-pipe.js';
import { main } from './main.js';

// `gpumem status --watch | head`: the reader went away (see broken-pipe.ts for supervised runs).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (brokenPipeEndsGpumem(error)) process.exit(0);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    // exitCode, not exit(): lets stdout drain when it is a pipe.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`gpumem: internal error: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
