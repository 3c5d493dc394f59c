/**
 * The PyTorch part of the end-of-run report: per GPU the split of the tree's memory at its peak (NVML tree
 * total = allocated + reserved-unallocated + non-PyTorch + tree processes without PyTorch statistics), the
 * allocator's own peaks, retries and OOMs; the allocator's numbers at each OOM; snapshots written; each
 * process's step timing.
 */
import type { OomSettingsAnswer, SnapshotOomAnswer } from '../../core/allocator/oom-answer.js';
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import { describeSteps } from '../../core/companion/steps.js';
import type { OomFinding } from '../../core/run/report.js';
import type { StoredAllocatorAtOom, StoredCompanion } from '../../core/run/stored-report.js';
import { table, type Color } from './style.js';
import { renderRanks } from './run-ranks.js';

type Paint = (color: Color, text: string) => string;

/** The parts of an attempt this renders: a live AttemptReport, or one read back by parseStoredRunReport. */
interface PytorchAttempt {
  attempt: number;
  plugins?: { companion?: StoredCompanion | null };
}

/** The companion's report of an attempt, when the companion ran (a stored report may predate it). */
export function companionOf(a: PytorchAttempt): StoredCompanion | null {
  return a.plugins?.companion ?? null;
}

/** "allocator at the OOM: …" for a finding the companion matched, else null. */
export function allocatorLine(f: OomFinding): string | null {
  return f.allocator ? `    allocator at that instant: ${describeAllocator(f.allocator)}` : null;
}

function describeAllocator(at: StoredAllocatorAtOom): string {
  if (at.source === 'counter') return `pid ${at.pid ?? '?'} cuda:${at.device ?? '?'}: counted by num_ooms (this torch has no OOM observer, so no sizes)`;
  return `pid ${at.pid ?? '?'} cuda:${at.device ?? '?'}: requested ${formatBytes(at.requestedBytes)}, allocated ${formatBytes(at.allocatedBytes)}, ` +
    `reserved ${formatBytes(at.reservedBytes)} (${formatBytes(at.unallocatedBytes)} unallocated), ${formatBytes(at.deviceFreeBytes)} free of ${formatBytes(at.deviceLimitBytes)}, ` +
    `retries ${at.numAllocRetries ?? 'n/a'}`;
}

/** "no CUDA device in pid …: cause", once per distinct cause, so a run with many workers says it once. */
function noCudaLines(report: StoredCompanion | null, paint: Paint): string[] {
  const byCause = new Map<string, number[]>();
  for (const p of report?.processes ?? []) {
    if (typeof p.noCuda === 'string') byCause.set(p.noCuda, [...(byCause.get(p.noCuda) ?? []), p.pid]);
  }
  return [...byCause].map(([cause, pids]) =>
    paint('red', `  no CUDA device in pid ${pids.join(', ')}: ${printable(cause)} — the program ran without the GPU`));
}

/** Lines for the last attempt's PyTorch split, unprinted OOMs and snapshots; empty without companion data. */
export function renderPytorch(attempts: readonly PytorchAttempt[], paint: Paint): string[] {
  const out: string[] = [];
  const last = attempts[attempts.length - 1];
  const report = last ? companionOf(last) : null;
  out.push(...noCudaLines(report, paint));
  if (report && report.gpus.length > 0) {
    out.push(`  PyTorch (companion${attempts.length > 1 ? `, attempt ${last?.attempt}` : ''}), split at the tree's peak on each GPU:`);
    const rows = report.gpus.map((g) => [
      g.gpuIndex === null ? printable(g.gpuUuid ?? '?') : `GPU ${g.gpuIndex}`, formatBytes(g.treeBytes), formatBytes(g.allocatedBytes), formatBytes(g.reservedBytes),
      formatBytes(g.unallocatedBytes), formatBytes(g.nonPytorchBytes), formatBytes(g.otherProcessesBytes), formatBytes(g.peakAllocatedBytes),
      String(g.numAllocRetries ?? 'n/a'), String(g.numOoms ?? 'n/a'),
    ]);
    // The run's own processes without PyTorch statistics (DataLoader workers): not the other processes on
    // the GPU that the pre-flight line counts, hence not "other processes".
    const head = ['', 'TREE (NVML)', 'ALLOCATED', 'RESERVED', 'UNALLOCATED', 'NON-PYTORCH', 'RUN, NO TORCH', 'PEAK ALLOC', 'RETRIES', 'OOMS'];
    const laid = table([head, ...rows], ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right']);
    laid.forEach((l, i) => out.push(i === 0 ? paint('gray', `    ${l}`) : `    ${l}`));
    const retrying = report.gpus.filter((g) => (g.numAllocRetries ?? 0) > 0);
    if (retrying.length > 0) {
      out.push(paint('yellow', `    allocator retries on ${retrying.map((g) => `GPU ${g.gpuIndex ?? printable(g.gpuUuid ?? '?')}`).join(', ')}: PyTorch had to free its cache to satisfy allocations — a warning sign before an OOM`));
    }
  }
  out.push(...renderRanks(report?.ranks, paint));
  for (const a of attempts) {
    for (const u of companionOf(a)?.unprintedOoms ?? []) {
      out.push(paint('yellow', `  OOM caught by the program (attempt ${a.attempt}, not printed): ${describeAllocator(u)}`));
    }
    const answers = companionOf(a)?.snapshotAnswers ?? [];
    for (const file of companionOf(a)?.snapshots ?? []) {
      out.push(`  memory snapshot at the OOM: ${printable(file)}  (gpumem snapshot ${printable(file)}; add --what-if 'expandable_segments:True' to replay it under other allocator settings)`);
      const answer = answers.find((x) => x.file === file);
      if (answer) out.push(...renderSnapshotAnswer(answer, paint));
    }
    for (const p of companionOf(a)?.processes ?? []) {
      // Stored reports from before step timing have no `steps`.
      if (p.steps && p.steps.steps > 0) out.push(`  steps of pid ${p.pid}${attempts.length > 1 ? ` (attempt ${a.attempt})` : ''}: ${describeSteps(p.steps)}`);
      if (p.oomsNotKept > 0) out.push(paint('gray', `  companion (pid ${p.pid}): ${p.oomsNotKept} more OOM reports were counted but not kept (the first ${p.ooms.length} are above)`));
      for (const [what, message] of Object.entries(p.companionErrors)) out.push(paint('gray', `  companion (pid ${p.pid}): ${printable(what)} failed: ${printable(message)}`));
    }
    const notKept = companionOf(a)?.notKept;
    for (const problem of companionOf(a)?.problems ?? []) out.push(paint('gray', `  companion channel: ${printable(problem)}`));
    if (notKept) out.push(paint('yellow', `  companion channel${attempts.length > 1 ? ` (attempt ${a.attempt})` : ''}: ${describeNotKept(notKept)}`));
  }
  return out;
}

/** "412 messages not kept: 1 naming a pid outside the run, 384 over the cap on error messages, …". */
function describeNotKept(n: NonNullable<StoredCompanion['notKept']>): string {
  const parts = [
    n.notInRun > 0 ? `${n.notInRun} naming a pid outside the run` : null,
    ...Object.entries(n.overKindLimit).map(([kind, count]) => `${count} over the cap on ${kind} entries`),
    n.overTotalBytes > 0 ? `${n.overTotalBytes} over the cap on bytes kept` : null,
  ].filter((x): x is string => x !== null);
  const refused = n.notInRun + n.overTotalBytes + Object.values(n.overKindLimit).reduce((s, c) => s + c, 0);
  const extras = [
    n.textsCut > 0 ? `${n.textsCut} text${n.textsCut === 1 ? '' : 's'} cut to the length kept` : null,
    n.problemLines > 0 ? `${n.problemLines} more connection${n.problemLines === 1 ? '' : 's'} with unreadable lines` : null,
  ].filter((x): x is string => x !== null);
  const head = refused > 0 ? `${refused} message${refused === 1 ? '' : 's'} not kept (${parts.join(', ')})` : 'every message kept';
  return extras.length > 0 ? `${head}; ${extras.join('; ')}` : head;
}

function settingsVerdict(x: OomSettingsAnswer): string {
  if (x.oomAvoided) return `would have succeeded${x.oomSpareBytes !== null ? ` with ${formatBytes(x.oomSpareBytes)} to spare` : ''}`;
  return `would still fail${x.firstOomEventIndex !== null ? ` (the first allocation to fail is trace event ${x.firstOomEventIndex})` : ''}`;
}

/** What the allocator simulation says about one OOM snapshot, per device whose trace holds the OOM. */
export function renderSnapshotAnswer(answer: SnapshotOomAnswer, paint: Paint): string[] {
  if (answer.problem !== null) return [paint('gray', `    allocator simulation: ${printable(answer.problem)}`)];
  return answer.devices.flatMap((d) => {
    const scope = d.coversWholeRun ? 'trace covers the run' : 'trace starts mid-run, seeded from the snapshot';
    const lines = [
      `    allocator simulation, device ${d.device} (${scope}): with ${printable(d.whatIf.settings)} the failed request ${settingsVerdict(d.whatIf)}`,
      `      under the run's own settings the replayed request ${settingsVerdict(d.recorded)}`,
    ];
    if (d.recorded.oomAvoided) lines.push(paint('yellow', '      the simulation does not reproduce this OOM under the run\'s own settings: treat the answer above with care'));
    return lines;
  });
}
