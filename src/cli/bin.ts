#!/usr/bin/env node
/** Entry point of the `gpumem` executable: the only module that ends the process or sets its exit status. */
import { writeSync } from 'node:fs';
import { outputErrorAction } from './broken-pipe.js';
import { main } from './main.js';

// `gpumem status --watch | head`, or `> /dev/full`: see broken-pipe.ts (and it for supervised runs).
for (const [name, stream] of [['stdout', process.stdout], ['stderr', process.stderr]] as const) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    const action = outputErrorAction(error, name);
    if (action === null) return;
    if (action.line !== null && name !== 'stderr') {
      try {
        writeSync(2, action.line);
      } catch {
        // stderr fails too: the exit status is all that is left to say it.
      }
    }
    process.exit(action.exit);
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
