/** Human rendering of a supervised run's report (stderr, after the child's own output). */
import { formatBytes, formatDuration, formatPercent } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { AttemptReport, RunReport } from '../../core/run/report.js';
import { allocatorLine, renderPytorch } from './run-pytorch.js';
import { painter } from './style.js';

function exitText(exit: RunReport['exit']): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code ?? '?'}`;
}

function attemptLine(a: AttemptReport): string {
  const batch = a.batch ? `batch ${a.batch.batch} × accum ${a.batch.accum}: ` : '';
  const oom = a.ooms.length > 0 ? ` — OOM at output line ${a.ooms.map((o) => o.line).join(', ')}` : '';
  return `attempt ${a.attempt}: ${batch}${exitText(a.exit)} after ${formatDuration(a.durationMs)}${oom}`;
}

/** The end-of-run summary: duration, peaks per GPU, attempts, OOMs, mismatches, leftovers, cleanup, exit. */
export function renderRunReport(report: RunReport, color: boolean, runId: number | null): string {
  const paint = painter(color);
  const ok = report.exit.code === 0 && !report.exit.signal;
  const out: string[] = [];
  out.push(paint('bold', `gpumem run: ${paint(ok ? 'green' : 'red', exitText(report.exit))} after ${formatDuration(report.durationMs)}` +
    (report.retries > 0 ? `, ${report.retries} OOM retr${report.retries === 1 ? 'y' : 'ies'}` : '')));
  if (report.startError !== null && report.startError !== undefined) {
    out.push(paint('red', `  not started: ${report.startError}`));
    return `${[...out, ...(runId !== null ? [paint('gray', `  stored as run ${runId} (gpumem runs show ${runId})`)] : [])].join('\n')}\n`;
  }
  if (report.peaks.length === 0) out.push('  peak GPU memory of the process tree: none seen');
  for (const p of report.peaks) {
    const flag = p.chosen ? '' : paint('red', '  NOT CHOSEN');
    const unknown = p.unknownSamples > 0 ? ` (${p.unknownSamples} samples without a per-process figure)` : '';
    out.push(`  GPU ${p.index} peak ${formatBytes(p.peakBytes)} at ${formatDuration(p.atMs)}${unknown}${flag}`);
  }
  const last = report.attempts[report.attempts.length - 1];
  if (last) out.push(`  sampled ${last.samples} times (${last.sampleHz} Hz)`);
  for (const u of last?.utilization ?? []) {
    if (u.meanGpuPct === null) continue;
    const sm = u.meanTreeSmPct === null ? '' : `, the run's SM ${formatPercent(u.meanTreeSmPct)}`;
    out.push(`  GPU ${u.index} utilization: mean ${formatPercent(u.meanGpuPct)}${sm} over ${u.samples} samples`);
  }
  for (const f of last?.findings ?? []) {
    out.push(paint('yellow', `  ${printable(f.title)}`));
    out.push(`    fix: ${printable(f.fix)}`);
  }
  if (report.attempts.length > 1 || report.attempts[0]?.batch) for (const a of report.attempts) out.push(`  ${attemptLine(a)}`);
  if (report.retryNote) out.push(`  retry: ${report.retryNote}`);
  for (const a of report.attempts) {
    for (const m of a.mismatches) {
      out.push(paint('red', `  device mismatch: pid ${m.pid} (${printable(m.comm ?? '?')}) used ${formatBytes(m.usedBytes)} on GPU ${m.index}, not chosen (first seen at ${formatDuration(m.firstSeenMs)})`));
    }
    for (const p of a.appeared ?? []) {
      out.push(paint('red', `  GPU ${p.index}: pid ${p.pid} appeared holding ${formatBytes(p.maxUsedBytes)} at ${formatDuration(p.firstSeenMs)}, not one of the run's processes (another user's job, or one that escaped the run)`));
    }
    for (const o of a.ooms) {
      out.push(paint('yellow', `  OOM (attempt ${a.attempt}, line ${o.line}): ${printable(o.text.slice(0, 160))}`));
      const allocator = allocatorLine(o);
      if (allocator) out.push(allocator);
      for (const c of o.causes.slice(0, 3)) out.push(`    likely: ${c.title}`);
    }
    if ((a.oomsNotKept ?? 0) > 0) out.push(paint('gray', `  attempt ${a.attempt}: ${a.oomsNotKept} more OOM messages in the output were counted but not kept (the first ${a.ooms.length} are above)`));
    for (const l of a.cleanup.leftovers) {
      out.push(`  leftover pid ${l.pid} ${printable(l.cmdline?.join(' ').slice(0, 60) ?? l.comm ?? '')} (${formatBytes(l.gpuBytes)} on GPU): ${l.outcome} — ${printable(l.detail)}`);
    }
  }
  out.push(...renderPytorch(report.attempts, paint));
  const cleanup = last?.cleanup;
  if (cleanup) {
    const survivors = cleanup.survivors ?? [];
    if (survivors.length > 0) {
      out.push(paint('red', `  cleanup failed: ${survivors.length} process${survivors.length === 1 ? '' : 'es'} of the run still running after ${cleanup.rounds ?? 1} round${cleanup.rounds === 1 ? '' : 's'} of ending them`));
      for (const s of survivors.slice(0, 20)) out.push(paint('red', `    pid ${s.pid} ${printable(s.cmdline?.join(' ').slice(0, 60) ?? s.comm ?? '')}: ${printable(s.detail)}`));
      if (survivors.length > 20) out.push(paint('red', `    … and ${survivors.length - 20} more`));
    }
    if ((cleanup.leftoversNotListed ?? 0) > 0) out.push(paint('gray', `  ${cleanup.leftoversNotListed} more leftover processes were ended but not listed`));
    out.push(cleanup.memoryReleased
      ? `  cleanup: no process of the run holds GPU memory (checked ${formatDuration(cleanup.waitedMs)} after exit)`
      : paint('red', `  cleanup: the run's processes still held GPU memory ${formatDuration(cleanup.waitedMs)} after exit`));
    for (const h of cleanup.heldByNothing) {
      out.push(paint('red', `  GPU ${h.index}: ${formatBytes(h.bytes)} held by no process (beyond ${formatBytes(cleanup.toleranceBytes)} tolerance)`));
    }
  }
  if (runId !== null) out.push(paint('gray', `  stored as run ${runId} (gpumem runs show ${runId})`));
  return `${out.join('\n')}\n`;
}
