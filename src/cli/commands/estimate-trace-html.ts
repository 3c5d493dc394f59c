/** `gpumem estimate --html OUT` for a traced step: the timeline of each reported trace, rendered and written. */
import { resolve } from 'node:path';
import type { StepTrace } from '../../core/estimate/trace.js';
import { traceTimeline } from '../../core/estimate/trace-timeline.js';
import type { CommandContext } from '../context.js';
import type { EstimateOptions } from '../options/estimate.js';
import { writeUserFile } from '../output-file.js';
import { renderTracedHtml } from '../render/estimate-html.js';
import { allocatorModel, type TracedReport } from '../../core/estimate/traced-report.js';

/**
 * Replays each report's trace (found by its command in `traces`) for its timeline and writes the page to
 * `out`, relative to the working directory, with the allocator rules of `runTorch` (--torch-version) or else
 * of the traced release, as the report was; `data` (what --json prints) is embedded in the page.
 */
export function writeTracedPage(
  ctx: CommandContext<EstimateOptions>,
  out: string,
  reports: ReadonlyArray<{ title: string; report: TracedReport }>,
  data: unknown,
  traces: ReadonlyMap<string, StepTrace>,
  workspaceBytes: number,
  conf: string | null,
  runTorch: string | null,
): void {
  const sections = reports.flatMap(({ title, report }) => {
    const trace = traces.get(JSON.stringify(report.command));
    if (!trace) return [];
    return [{ title, report, timeline: traceTimeline(trace, workspaceBytes, allocatorModel(conf, runTorch ?? trace.torchVersion)) }];
  });
  writeUserFile(resolve(ctx.cwd, out), renderTracedHtml(sections, data), '--html', out);
}
