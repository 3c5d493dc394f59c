/** The JSON form of a pipeline's report: each stage's run report as core/run writes it. */
import { runReportJson, type RunReportJson } from '../../core/run/json.js';
import type { PipelineReport, StageReport } from './run.js';

export type PipelineReportJson = Omit<PipelineReport, 'stages'> & { stages: Array<Omit<StageReport, 'run'> & { run: RunReportJson | null }> };

/** The report as `gpumem pipeline --json` and the history write it. */
export function pipelineReportJson(report: PipelineReport): PipelineReportJson {
  return { ...report, stages: report.stages.map((s) => ({ ...s, run: s.run === null ? null : runReportJson(s.run) })) };
}
