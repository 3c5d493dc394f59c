#!/usr/bin/env node
/** Entry point of the `gpumem` executable. */
import { main } from './main.js';

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
