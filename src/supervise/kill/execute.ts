/**
 * Carries out a kill plan. Right before signalling, GPU state is read again: a pid must still be in the
 * driver's list for the GPU it was selected on, and its (pid, start ticks) must still match /proc —
 * otherwise it is skipped with the reason. Then TERM, grace, KILL, with one outcome per pid.
 */
import type { GpuSource } from '../../sources/index.js';
import { endProcesses, type EndResult } from '../terminate.js';
import { readProcEntry } from '../proc-table.js';
import type { KillRow } from './select.js';

export interface KillOutcome {
  pid: number;
  outcome: EndResult['outcome'] | 'refused';
  detail: string;
}

/** Ends the rows marked "end" (each pid once, whatever number of GPUs it was on). */
export async function executeKill(rows: readonly KillRow[], source: GpuSource, graceMs: number): Promise<KillOutcome[]> {
  const fresh = await source.readSample();
  const byPid = new Map<number, KillRow[]>();
  for (const r of rows) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r]);
  const outcomes: KillOutcome[] = [];
  const targets: Array<{ pid: number; startTicks: number }> = [];
  for (const [pid, list] of byPid) {
    const refused = list.find((r) => r.action === 'refuse');
    if (refused) {
      outcomes.push({ pid, outcome: 'refused', detail: refused.reason });
      continue;
    }
    targets.push({ pid, startTicks: list[0]?.startTicks as number });
  }
  const stillOnGpu = (pid: number): string | null => {
    const list = byPid.get(pid) ?? [];
    const present = list.some((r) => fresh.processes.some((p) => p.pid === pid && p.gpuUuid === r.gpuUuid));
    return present ? null : 'no longer in the driver\'s process list for that GPU';
  };
  const results = await endProcesses(targets, { graceMs, beforeSignal: (t) => stillOnGpu(t.pid) });
  for (const r of results) outcomes.push({ pid: r.pid, outcome: r.outcome, detail: r.detail });
  return outcomes;
}

/** gpumem's pid and every ancestor up to pid 1: never ended. */
export function protectedPids(selfPid: number): Set<number> {
  const out = new Set<number>([1, selfPid]);
  let pid = selfPid;
  for (let i = 0; i < 4096; i++) {
    const entry = readProcEntry(pid);
    if (!entry || entry.ppid <= 1) break;
    out.add(entry.ppid);
    pid = entry.ppid;
  }
  return out;
}
