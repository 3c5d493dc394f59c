/**
 * `gpumem doctor` (also the bare `gpumem`): the status table and the findings in one screen. Without any
 * GPU access it shows the bundled example recording and says so in its first line.
 */
import { painter } from '../render/style.js';
import type { CommandHandler } from '../context.js';
import type { DiagnoseOptions } from '../options/gpus.js';
import { reportJson } from '../diagnose/json.js';
import { describeWindow, renderFindings } from '../diagnose/render.js';
import { outcomeOf, runDiagnosis } from '../diagnose/run.js';
import { renderStatus } from '../render/status.js';

export const run: CommandHandler<DiagnoseOptions> = async (ctx) => {
  const { report, collected, fallback } = await runDiagnosis(ctx, true);
  if (ctx.args.options.json) {
    ctx.stdout.write(`${JSON.stringify(reportJson(report, 'doctor', fallback, collected.recordingNote), null, 2)}\n`);
    return outcomeOf(report);
  }
  const paint = painter(ctx.color);
  const lines: string[] = [];
  if (fallback) {
    const synthetic = /synthetic/i.test(collected.recordingNote ?? '') ? ', synthetic' : '';
    lines.push(paint('yellow', `No GPU access on this machine: showing the bundled example recording (examples/doctor-example.ndjson${synthetic}), not your GPUs.`));
    lines.push(paint('gray', `why: ${fallback.reason}`));
  } else {
    lines.push(`gpumem doctor: ${describeWindow(report)}`);
  }
  // The status table is the one `gpumem status` prints, for the latest sample of the window.
  const latest = collected.input.samples[collected.input.samples.length - 1]!;
  lines.push(renderStatus(latest, { columns: ctx.stdout.columns, color: ctx.color }).trimEnd());
  lines.push('', ...renderFindings(report.findings, paint, ctx.stdout.columns, true));
  lines.push('', paint('gray', 'evidence for each finding and the byte-by-byte accounting: gpumem diagnose'));
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return outcomeOf(report);
};
