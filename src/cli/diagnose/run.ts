/**
 * What `gpumem diagnose` and `gpumem doctor` share: turn the options into a diagnosis window (collected and
 * diagnosed in orchestrate/; doctor falls back to the bundled example recording when there is no GPU access
 * at all) and decide the outcome.
 */
import { fileURLToPath } from 'node:url';
import type { DiagnoseReport } from '../../core/diagnose/engine.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { DIAGNOSIS_FIELDS } from '../nvml-fields.js';
import type { CommandContext } from '../context.js';
import type { DiagnoseOptions } from '../options/gpus.js';
import type { Outcome } from '../exit-codes.js';
// The module itself, not orchestrate's door: the door also loads the live sampler, the fit loop and the snapshot
// analysis, none of which doctor's first screen needs.
import { diagnoseWindow, type CollectOptions, type Diagnosed } from '../../orchestrate/diagnosis-window.js';

export type { Diagnosed };

/** The bundled example recording (examples/ ships in the npm package). */
export const EXAMPLE_RECORDING = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));

/** Time between live samples in the window. */
export const SAMPLE_INTERVAL_MS = 500;

/** Collects and diagnoses the window the options ask for; with `fallbackToExample`, no GPU access shows the bundled recording. */
export function runDiagnosis(ctx: CommandContext<DiagnoseOptions>, fallbackToExample: boolean, onSample?: CollectOptions['onSample']): Promise<Diagnosed> {
  return diagnoseWindow({
    windowMs: Math.round(ctx.args.options.window * 1000), intervalMs: SAMPLE_INTERVAL_MS, source: sourceOptionsFromContext(ctx, DIAGNOSIS_FIELDS),
    fallbackRecording: fallbackToExample ? EXAMPLE_RECORDING : null, ...(onSample ? { onSample } : {}),
  });
}

/**
 * Exit 1 when anything was found, 0 when nothing was; with `criticalOnly` (doctor's default) only a critical
 * finding counts, so `gpumem && ./train.sh` goes on when the machine has warnings but nothing in the way.
 */
export function outcomeOf(report: DiagnoseReport, criticalOnly = false): Outcome {
  const counted = criticalOnly ? report.findings.filter((f) => f.severity === 'critical') : report.findings;
  return counted.length > 0 ? { kind: 'findings' } : { kind: 'ok' };
}
