/**
 * The only place gpumem decides its exit status. Handlers return an Outcome; errors carry a code; this
 * module turns either into a number. Documented in --help and docs/cli.md from EXIT_CODE_DOCS.
 */
import { constants } from 'node:os';
import { isGpumemError } from '../core/errors.js';

export const EXIT = {
  OK: 0,
  FINDINGS: 1,
  USAGE: 2,
  NO_GPU: 3,
} as const;

/** What a command handler reports back. */
export type Outcome =
  | { kind: 'ok' }
  /** Something was found (an OOM, a finding) or an action failed: exit 1. */
  | { kind: 'findings' }
  | { kind: 'failure' }
  /** A supervised child ended: its exit code, or the signal that killed it (128+n). */
  | { kind: 'child'; code: number | null; signal: NodeJS.Signals | null; cleanupFailed?: boolean };

export const EXIT_CODE_DOCS: ReadonlyArray<{ code: string; meaning: string }> = [
  { code: '0', meaning: 'success; nothing found' },
  { code: '1', meaning: 'findings or OOMs found (`doctor`: a critical finding, or any with `--exit-code`), or an action failed (also: gpumem\'s own output could not be written, e.g. a full disk; an internal error, printed with its stack)' },
  { code: '2', meaning: 'usage error: bad option, argument or input file; also a word from another tool (`gpumem clear`, `--suggest-batch-size`), answered with the command that does its job' },
  { code: '3', meaning: 'no GPU access: no NVIDIA driver, NVML or nvidia-smi could not be used' },
  { code: '126/127', meaning: '`run`/`pipeline`/`fit`/`estimate -- CMD`: the command was found but could not be executed (126) or was not found (127), as in a shell; a run is recorded as not-started' },
  { code: '128+n', meaning: '`run`/`pipeline`: the child was killed by signal n; otherwise the child\'s own exit code is passed on (0 becomes 1 when a process of the run survived cleanup; the report names it)' },
];

/** 128 + the signal's number on this system (every signal, SIGXCPU, SIGSYS and SIGPWR included), as a shell gives. */
export function exitCodeForSignal(signal: string): number {
  const n = (constants.signals as Record<string, number | undefined>)[signal];
  // Node reports only signals the system knows, so n is always found; 128 alone would still say "a signal".
  return 128 + (n ?? 0);
}

/** gpumem's own stdout or stderr could not be written (a full disk): the command could not do its job. */
export function exitCodeForOutputFailure(): number {
  return EXIT.FINDINGS;
}

export function exitCodeForOutcome(outcome: Outcome): number {
  switch (outcome.kind) {
    case 'ok':
      return EXIT.OK;
    case 'findings':
    case 'failure':
      return EXIT.FINDINGS;
    case 'child':
      // Success is not passed on when the run left a process behind: cleanup failed, and scripts must see it.
      if (outcome.code === 0 && !outcome.signal && outcome.cleanupFailed) return EXIT.FINDINGS;
      if (outcome.signal) return exitCodeForSignal(outcome.signal);
      return outcome.code ?? EXIT.FINDINGS;
  }
}

export function exitCodeForError(error: unknown): number {
  if (!isGpumemError(error)) return EXIT.FINDINGS;
  // A program gpumem was asked to start (estimate -- CMD, fit) and could not: the statuses a shell gives.
  if (error.code === 'PROGRAM_NOT_FOUND') return 127;
  if (error.code === 'PROGRAM_NOT_EXECUTABLE') return 126;
  switch (error.errorClass) {
    case 'usage':
    case 'input':
      return EXIT.USAGE;
    case 'no-gpu':
      return EXIT.NO_GPU;
    case 'failure':
      return EXIT.FINDINGS;
  }
}
