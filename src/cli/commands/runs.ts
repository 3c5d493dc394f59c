/** `gpumem runs` and `gpumem runs show ID`: the run history (docs/run.md, "History"). */
import { GpumemError } from '../../core/errors.js';
import { formatBytes, formatDuration, formatPercent } from '../../core/units.js';
import { printable } from '../../core/text.js';
import { getRun, listPipelines, listRuns, type PipelineRow, type RunRow } from '../../store/index.js';
import { cleanupProblems, type CleanupReport } from '../../core/run/index.js';
import type { CommandHandler } from '../context.js';
import type { RunsOptions } from '../options/supervise.js';
import type { StoredRunReport } from '../../core/run/stored-report.js';
import { runDetailDocument } from '../../core/documents/run-detail.js';
import { runsDocument } from '../../core/documents/runs.js';
import { renderPytorch } from '../render/run-pytorch.js';
import { painter, table, trimTo } from '../render/style.js';
import { existingHistoryFor } from './history.js';


function exitText(r: RunRow): string {
  if (r.unreadable) return 'unreadable';
  if (r.status === 'running') return 'running / cut off';
  const exit = r.exitSignal ? r.exitSignal : String(r.exitCode ?? '?');
  return r.status === 'cleanup-failed' ? `${exit}, cleanup failed` : exit;
}

/** The pipelines, each with its outcome and its stages' run ids (for `gpumem runs show ID`). */
function renderPipelines(pipelines: readonly PipelineRow[], paint: ReturnType<typeof painter>): string[] {
  const header = ['PIPELINE', 'STARTED', 'DURATION', 'STATUS', 'STAGES (run id: stage status)', 'NAME'];
  const body = pipelines.map((p) => [
    String(p.id), new Date(p.startedAtMs).toISOString().replace('T', ' ').slice(0, 19), formatDuration(p.durationMs),
    p.status === 'ok' ? paint('green', p.status) : paint('red', p.status === 'running' ? 'running / cut off' : p.status),
    p.stages.map((s) => `${s.runId}: ${printable(s.stage ?? '?')} ${printable(s.status)}`).join(', ') || '-',
    trimTo(printable(p.name ?? p.file), 40),
  ]);
  return table([header, ...body], ['right', 'left', 'right', 'left', 'left']);
}

/**
 * The cleanup verdict of a stored run: a pipeline stage's check when there was one, else its last attempt's
 * cleanup (survivors, memory still held). Null for older or damaged reports that do not say.
 */
function cleanupVerdict(document: unknown): string | null {
  // The stored document as written (outside data: every field is checked before use).
  const rep = document as { cleanupCheck?: { passed?: unknown; reason?: unknown }; attempts?: unknown } | null;
  const check = rep?.cleanupCheck;
  if (check && typeof check.passed === 'boolean') {
    return check.passed ? 'cleanup check between stages: passed' : `cleanup check between stages: FAILED — ${typeof check.reason === 'string' ? printable(check.reason) : 'no reason stored'}`;
  }
  const attempts = Array.isArray(rep?.attempts) ? rep.attempts : [];
  const cleanup = (attempts[attempts.length - 1] as { cleanup?: unknown } | undefined)?.cleanup as Partial<CleanupReport> | null | undefined;
  if (!cleanup || typeof cleanup !== 'object' || typeof cleanup.memoryReleased !== 'boolean') return null;
  const survivors = (Array.isArray(cleanup.survivors) ? cleanup.survivors : [])
    .filter((s): s is NonNullable<CleanupReport['survivors']>[number] => typeof (s as { pid?: unknown } | null)?.pid === 'number');
  const problems = cleanupProblems({ ...(cleanup as CleanupReport), survivors });
  return problems.length === 0 ? 'cleanup: passed' : `cleanup: FAILED — ${printable(problems.join('; '))}`;
}

export const run: CommandHandler<RunsOptions> = async (ctx) => {
  const [sub, idText, ...extra] = ctx.args.positionals;
  if (sub !== undefined && sub !== 'show') {
    throw new GpumemError('USAGE', `unknown "gpumem runs ${sub}"`, { hint: 'use gpumem runs, or gpumem runs show ID' });
  }
  if (sub === 'show' && (idText === undefined || !/^\d+$/.test(idText) || extra.length > 0)) {
    throw new GpumemError('USAGE', 'gpumem runs show needs one run id', { hint: 'see the ids in gpumem runs' });
  }
  const limit = ctx.args.options.limit;
  const db = existingHistoryFor(ctx);
  try {
    if (sub === 'show') {
      const found = db ? getRun(db, Number(idText)) : null;
      if (!found) throw new GpumemError('INPUT_NOT_FOUND', `no run ${idText} in the history`, { hint: 'see the ids in gpumem runs' });
      if (ctx.args.options.json) {
        // The stored document as written (unknown fields included); `reportDamage` lists what could not be read.
        ctx.stdout.write(`${JSON.stringify(runDetailDocument(found.run, found.report?.document ?? null, found.report?.damage ?? []), null, 2)}\n`);
      } else {
        ctx.stdout.write(renderShow(found.run, found.report, ctx.color));
      }
      return { kind: 'ok' };
    }
    const rows = db ? listRuns(db, limit) : [];
    const pipelines = db ? listPipelines(db, limit) : [];
    if (ctx.args.options.json) {
      ctx.stdout.write(`${JSON.stringify(runsDocument(rows, pipelines), null, 2)}\n`);
      return { kind: 'ok' };
    }
    if (rows.length === 0) {
      ctx.stdout.write('no runs recorded yet (gpumem run -- CMD records one)\n');
      return { kind: 'ok' };
    }
    const paint = painter(ctx.color);
    const header = ['ID', 'STARTED', 'DURATION', 'EXIT', 'RETRIES', 'GPUS', 'PEAK', 'STEP', 'DATA WAIT', 'SAMPLES/S', 'COMMAND'];
    const body = rows.map((r) => [
      String(r.id), new Date(r.startedAtMs).toISOString().replace('T', ' ').slice(0, 19), formatDuration(r.durationMs),
      r.status === 'ok' ? paint('green', exitText(r)) : paint('red', exitText(r)), String(r.retries),
      r.gpus ? r.gpus.map((g) => g.index).join(',') : 'all', formatBytes(r.peakBytes), ...stepCells(r),
      r.unreadable ? `(unreadable row: ${r.unreadable})` : trimTo(printable((r.stage ? `[${r.stage}] ` : '') + r.argv.join(' ')), 60),
    ]);
    ctx.stdout.write(`${table([header, ...body], ['right', 'left', 'right', 'left', 'right', 'left', 'right', 'right', 'right', 'right']).join('\n')}\n`);
    if (pipelines.length > 0) ctx.stdout.write(`\n${renderPipelines(pipelines, paint).join('\n')}\n`);
    return { kind: 'ok' };
  } finally {
    db?.close();
  }
};

/** Step time, data-wait share and samples/s of the run's training loop; '-' where the companion saw no steps. */
function stepCells(r: RunRow): [string, string, string] {
  return [
    r.meanStepMs === null ? '-' : `${r.meanStepMs.toFixed(1)} ms`,
    r.dataWaitShare === null ? '-' : formatPercent(r.dataWaitShare * 100),
    r.samplesPerSec === null ? '-' : r.samplesPerSec.toFixed(1),
  ];
}

function renderShow(r: RunRow, report: StoredRunReport | null, color: boolean): string {
  const paint = painter(color);
  const lines = [
    paint('bold', `run ${r.id}: ${printable(r.argv.join(' '))}`),
    ...(r.unreadable ? [paint('red', `  this stored run is damaged (${r.unreadable}); what could be read follows`)] : []),
    `  started ${new Date(r.startedAtMs).toISOString()} in ${printable(r.cwd)}; ${r.status === 'running' ? 'no end recorded (still running, or gpumem was killed)' : `${formatDuration(r.durationMs)}, exit ${exitText(r)}`}`,
  ];
  if (r.stage) lines.push(`  pipeline ${r.pipelineId}, stage ${printable(r.stage)}`);
  if (report && report.damage.length > 0) {
    const shown = report.damage.slice(0, 5).map((d) => trimTo(printable(d), 160));
    lines.push(paint('red', `  report damaged: ${shown.join('; ')}${report.damage.length > shown.length ? `; and ${report.damage.length - shown.length} more` : ''}`));
  }
  for (const d of report?.env ?? []) lines.push(`  env ${printable(d.name)}=${printable(d.value ?? '(unset)')} [${printable(d.action)}]`);
  for (const a of report?.attempts ?? []) {
    const batch = a.batch ? ` batch ${a.batch.batch} × accum ${a.batch.accum}` : '';
    lines.push(`  attempt ${a.attempt}${batch}: exit ${a.exit ? printable(a.exit.signal ?? String(a.exit.code ?? '?')) : '?'}`);
    for (const p of a.peaks) lines.push(`    GPU ${p.index ?? '?'} peak ${formatBytes(p.peakBytes)}${p.chosen ? '' : ' (not chosen)'}`);
    for (const o of a.ooms) lines.push(`    OOM line ${o.line ?? '?'}: ${trimTo(printable(o.text), 120)}`);
    for (const l of a.cleanup?.leftovers ?? []) lines.push(`    leftover pid ${l.pid ?? '?'} (${formatBytes(l.gpuBytes)}): ${printable(l.outcome)}`);
    for (const h of a.cleanup?.heldByNothing ?? []) lines.push(`    GPU ${h.index ?? '?'}: ${formatBytes(h.bytes)} held by no process after the run`);
  }
  const verdict = cleanupVerdict(report?.document ?? null);
  if (verdict) lines.push(verdict.includes('FAILED') ? paint('red', `  ${verdict}`) : `  ${verdict}`);
  lines.push(...renderPytorch(report?.attempts ?? [], paint));
  return `${lines.join('\n')}\n`;
}
