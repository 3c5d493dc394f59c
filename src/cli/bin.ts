#!/bin/sh
//bin/true; f=$0; [ -L "$f" ] && f=$(readlink -f "$f" 2>/dev/null || echo "$0"); [ -f "${f%.js}.cjs" ] && f=${f%.js}.cjs; case "$1" in watch) exec node --single-threaded-gc --interrupt-budget=540672 --inspect-port=192.0.2.1:9229 "$f" "$@";; record|serve|status|run|pipeline) exec node --single-threaded-gc --inspect-port=192.0.2.1:9229 "$f" "$@";; esac; exec node --inspect-port=192.0.2.1:9229 "$f" "$@"
/**
 * Entry point of the `gpumem` executable: the only module that ends the process or sets its exit status.
 *
 * The two lines above are read by the shell and by JavaScript alike: the shell runs /bin/true, then starts
 * Node with its inspector aimed at an address no host owns (signal-guard.ts says why); JavaScript sees a
 * comment. Node is started on bin.cjs beside this file when the build wrote it (the same code as CommonJS: an
 * ES-module entry alone costs Node 20 about 15 ms of start-up, docs/status.md), else on this file; a link to
 * the executable (npm's bin links) is followed first, since the copy lies beside the real file (where readlink
 * is missing, Node is started on the link itself, which runs this file). The commands that keep sampling for hours (watch, record, serve, status, run, pipeline) get V8's
 * garbage collector on the main thread alone: their heaps are a few MB, and V8's helper threads, woken for
 * each small collection, used as much CPU as the main thread (docs/watch.md has the runs: a mean of 1.04 %
 * of a core against 1.28 % for watch with numbers changing, within one run's noise). watch also gets eight
 * times V8's default interrupt budget (67584): code that runs once a second then reaches the optimising
 * compiler later and less often, and V8's threads stop compiling the same view code again and again (runs
 * side by side in docs/watch.md: 0.71–0.74 % of a core against 0.99–1.14 % with numbers changing, 0.44 %
 * against 0.53 % without). V8 takes such flags only at start.
 * The signal guard is installed before anything else is loaded; the commands come in after it (load-cli.ts: from
 * the bundle with its code cache, or the compiled modules).
 */
// Straight to the file, not through supervise/index.ts: nothing else may load before the guard is in place.
import { guardDebuggerSignals } from '../supervise/signal-guard.js';
// A built-in module: none of gpumem's code (a dynamic import of it would start Node's ES-module loader in bin.cjs).
import { writeSync } from 'node:fs';

guardDebuggerSignals();

/** Loads the commands, wires the output streams' failures and runs one invocation; returns its exit status. */
async function start(): Promise<number> {
  const { loadCli } = await import('./load-cli.js');
  const { onOutputFailure, main } = await loadCli();
  // `gpumem status --watch | head`, or a log on a full disk: see broken-pipe.ts for what each failure means.
  for (const [name, stream, otherFd] of [['stdout', process.stdout, 2], ['stderr', process.stderr, 1]] as const) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      const action = onOutputFailure(name, error);
      if (action.line) {
        try {
          writeSync(otherFd, action.line);
        } catch {
          // Both streams fail: nothing is left to say it on; the exit status still tells.
        }
      }
      if (action.exitCode !== null) process.exit(action.exitCode);
    });
  }
  return main(process.argv.slice(2));
}

// No top-level await: the build also makes a CommonJS copy of this file (the launcher's fast path).
start().then(
  (code) => {
    // exitCode, not exit(): lets stdout drain when it is a pipe.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`gpumem: internal error: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
