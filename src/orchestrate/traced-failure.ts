/**
 * Why a traced step could not be had, said so the user can act on it: the tracer's own diagnosis, or the
 * program's error when it ended before its first step.
 */
import { GpumemError } from '../core/errors.js';
import type { StepTrace } from '../core/estimate/index.js';
import { printable } from '../core/text.js';

function tracedHint(trace: StepTrace): string {
  if (/^ModuleNotFoundError|^ImportError/.test(trace.error ?? '')) {
    return 'install the missing package into the Python environment that runs the script (or run gpumem with that environment\'s python)';
  }
  if (/^--world-size: torch /.test(trace.error ?? '')) {
    return 'run the command with a Python environment whose torch is a checked release, or estimate one rank without --world-size';
  }
  if (/^the tracer could not start/.test(trace.error ?? '')) {
    return 'the program was stopped at its import of torch, before running untraced; the tracer is tested with torch 2.4.1 and 2.15.0 (docs/estimate.md, "Versions"): run the command with a Python environment that has such a release';
  }
  if (/refused under CUDA autocast/.test(trace.error ?? '')) {
    return 'the program fails the same way on a GPU: use binary_cross_entropy_with_logits (BCEWithLogitsLoss) on the logits, or compute the loss with autocast disabled on float32 inputs';
  }
  if (/^data-dependent control flow/.test(trace.error ?? '')) {
    return 'sizes that depend on values are traced at their largest; make that branch independent of the data, or trace a step function without it (--entry)';
  }
  if (trace.stepsDone > 0) return `traced ${trace.stepsDone} step(s); lower --steps or check the script`;
  return 'the tracer needs one full training step (forward, backward, optimizer.step()) run by this command';
}

const OWN_FAILURE_HINT = 'that is the program\'s own error, before any training step: run the same command with the same python to see it whole';

/**
 * For a program that exited with an error status before its first step without an exception the tracer saw
 * (sys.exit after printing its own error, an argument error): that status and the last lines it wrote to stderr,
 * which say what went wrong better than "ended without importing torch"; null otherwise.
 */
function programFailure(trace: StepTrace, exitCode: number | null, stderrTail: string): string | null {
  const before = /^the program ended (without importing torch|before its first training step)/.exec(trace.error ?? '');
  if (!before || exitCode === null || exitCode === 0) return null;
  const lines = stderrTail.split('\n').map((l) => l.trim()).filter((l) => l !== '').slice(-3).map((l) => printable(l.slice(0, 300)));
  const when = before[1] === 'without importing torch' ? 'before importing torch' : 'before its first training step';
  return `the program exited with status ${exitCode} ${when}${lines.length > 0 ? `; its last error lines: ${lines.join(' | ')}` : ' and wrote nothing to stderr'}`;
}

/**
 * The error for a trace that stopped with `trace.error` set. It is marked `untraceable`, with the tracer's own
 * words in `traceError`, for callers that fall back to measuring (run --batch auto).
 */
export function traceStopped(trace: StepTrace & { error: string }, shown: string, exitCode: number | null, stderrTail: string): GpumemError {
  const details = { untraceable: true, traceError: trace.error };
  const own = programFailure(trace, exitCode, stderrTail);
  if (own) return new GpumemError('CHILD_FAILED', `tracing ${shown} stopped: ${own}`, { hint: OWN_FAILURE_HINT, details });
  return new GpumemError('CHILD_FAILED', `tracing ${shown} stopped: ${printable(trace.error)}`, { hint: tracedHint(trace), details });
}

/** The same error (code, message, hint), marked `untraceable`: the traced program could not be run or read. */
export function untraceable(e: GpumemError): GpumemError {
  return new GpumemError(e.code, e.message, { hint: e.hint, cause: e, details: { ...e.details, untraceable: true } });
}
