/** `gpumem diagnose`: account for every byte per GPU over a window and list findings with evidence and fixes. */
import { painter } from '../render/style.js';
import type { CommandHandler } from '../context.js';
import type { DiagnoseOptions } from '../options/gpus.js';
import { reportJson } from '../diagnose/json.js';
import { describeWindow, renderAccounting, renderFindings } from '../diagnose/render.js';
import { outcomeOf, runDiagnosis } from '../diagnose/run.js';

export const run: CommandHandler<DiagnoseOptions> = async (ctx) => {
  const { report, collected } = await runDiagnosis(ctx, false);
  if (ctx.args.options.json) {
    ctx.stdout.write(`${JSON.stringify(reportJson(report, 'diagnose', null, collected.recordingNote), null, 2)}\n`);
    return outcomeOf(report);
  }
  const paint = painter(ctx.color);
  const lines = [`gpumem diagnose: ${describeWindow(report)}`];
  if (collected.recordingNote) lines.push(paint('gray', `recording note: ${collected.recordingNote}`));
  lines.push('', ...renderAccounting(report, paint, ctx.stdout.columns), '', ...renderFindings(report.findings, paint, ctx.stdout.columns));
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return outcomeOf(report);
};
