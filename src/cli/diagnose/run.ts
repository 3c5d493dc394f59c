/**
 * What `gpumem diagnose` and `gpumem doctor` share: read the options, collect the window (doctor falls
 * back to the bundled example recording when there is no GPU access at all), diagnose, and decide the outcome.
 */
import { fileURLToPath } from 'node:url';
import { diagnose, type DiagnoseReport } from '../../core/diagnose/engine.js';
import { isGpumemError } from '../../core/errors.js';
import { sourceOptionsFromContext } from '../open-source.js';
import type { CommandContext } from '../context.js';
import type { DiagnoseOptions } from '../options/gpus.js';
import type { Outcome } from '../exit-codes.js';
import { collectWindow, type CollectOptions, type Collected } from '../../orchestrate/index.js';
import type { Fallback } from './json.js';

/** The bundled example recording (examples/ ships in the npm package). */
export const EXAMPLE_RECORDING = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));

/** Time between live samples in the window. */
export const SAMPLE_INTERVAL_MS = 500;

export interface Diagnosed {
  report: DiagnoseReport;
  collected: Collected;
  fallback: Fallback | null;
}

/** Collects and diagnoses; with `fallbackToExample`, NO_GPU_ACCESS switches to the bundled recording. */
export async function runDiagnosis(ctx: CommandContext<DiagnoseOptions>, fallbackToExample: boolean, onSample?: CollectOptions['onSample']): Promise<Diagnosed> {
  const source = sourceOptionsFromContext(ctx);
  const window = Math.round(ctx.args.options.window * 1000);
  try {
    const collected = await collectWindow({ windowMs: window, intervalMs: SAMPLE_INTERVAL_MS, source, ...(onSample ? { onSample } : {}) });
    return { report: diagnose(collected.input), collected, fallback: null };
  } catch (error) {
    if (!fallbackToExample || !isGpumemError(error) || error.code !== 'NO_GPU_ACCESS' || source.replay !== undefined) throw error;
    const collected = await collectWindow({ windowMs: 0, intervalMs: SAMPLE_INTERVAL_MS, source: { ...source, replay: EXAMPLE_RECORDING } });
    return { report: diagnose(collected.input), collected, fallback: { reason: error.message, recording: EXAMPLE_RECORDING } };
  }
}

/** Exit 1 when anything was found, 0 when nothing was. */
export function outcomeOf(report: DiagnoseReport): Outcome {
  return report.findings.length > 0 ? { kind: 'findings' } : { kind: 'ok' };
}
