/**
 * The JSON form of a supervised run's report (docs/run.md): the same object with each OOM finding's event
 * and causes written as `gpumem explain --json` writes them (bigints as numbers, or decimal strings above
 * 2^53 − 1). `gpumem run --json`, `gpumem pipeline --json` and the run history all write this form.
 */
import { eventToJson } from '../oom/json.js';
import type { AttemptReport, OomFinding, RunReport } from './report.js';

/** An OOM finding as written: `event` without its causes, the causes beside it. */
export interface OomFindingJson {
  line: number;
  text: string;
  event: Record<string, unknown>;
  causes: unknown[];
  allocator?: OomFinding['allocator'];
}

export type AttemptReportJson = Omit<AttemptReport, 'ooms'> & { ooms: OomFindingJson[] };
export type RunReportJson = Omit<RunReport, 'attempts'> & { attempts: AttemptReportJson[] };

/** One finding as written. */
export function oomFindingJson(finding: OomFinding): OomFindingJson {
  const { causes, ...event } = eventToJson(finding.event, finding.causes);
  const out: OomFindingJson = { line: finding.line, text: finding.text, event, causes: (causes as unknown[] | undefined) ?? [] };
  if (finding.allocator) out.allocator = finding.allocator;
  return out;
}

/** The report as written: every attempt's findings converted, everything else as it is. */
export function runReportJson(report: RunReport): RunReportJson {
  return { ...report, attempts: report.attempts.map((a) => ({ ...a, ooms: a.ooms.map(oomFindingJson) })) };
}
