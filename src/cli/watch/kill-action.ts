/**
 * Ending a process from the live view with exactly the checks of `gpumem kill`: the same selection
 * (own processes only unless root and --all-users, never gpumem or its ancestors, start time known, an NVIDIA
 * device open) on the sample the person saw, then the same re-check of pid, start time and GPU right before
 * the signal. Returns one line for the status bar.
 */
import { printable, type Sample } from '../../core/index.js';
import type { GpuSource } from '../../sources/index.js';
import { executeKill, gpuProofReason, protectedPids, selectTargets, type KillOptions } from '../../supervise/index.js';

export interface KillActionOptions {
  allUsers: boolean;
  graceMs: number;
  killOptions: KillOptions;
}

/** Ends `pid` as it was in `seen` (the sample on screen when the key was pressed). */
export async function killFromView(pid: number, seen: Sample, source: GpuSource, options: KillActionOptions): Promise<string> {
  const caller = {
    uid: process.getuid?.() ?? -1,
    protectedPids: protectedPids(process.pid),
    allUsers: options.allUsers,
    nowMs: Date.now(),
    gpuProof: (p: number) => gpuProofReason(p, options.killOptions),
  };
  const criteria = { pids: [pid], gpus: [], orphans: false, zombieHolders: false, user: null, olderThanMs: null, idle: false };
  const rows = selectTargets(seen, criteria, caller);
  const refused = rows.find((r) => r.action === 'refuse');
  if (refused) return `refused pid ${pid}: ${printable(refused.reason)}`;
  const outcomes = await executeKill(rows, source, options.graceMs, options.killOptions);
  return outcomes.map((o) => `pid ${o.pid}: ${o.outcome}${o.detail ? ` (${printable(o.detail)})` : ''}`).join('; ');
}
