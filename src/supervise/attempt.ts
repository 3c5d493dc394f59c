/**
 * One attempt of a supervised run: spawn, watch the tree at the sampling interval, detect OOMs in the
 * output, verify cleanup, and build the attempt's report. A program that cannot be started gives a
 * not-started report (exit 127/126) instead of an exception.
 */
import { appendAll } from '../core/arrays.js';
import { formatBytes } from '../core/units.js';
import { printable } from '../core/text.js';
import { isGpumemError } from '../core/errors.js';
import { underUsedFinding, type RunFinding } from '../core/run/utilization.js';
import { startChild, type RunningChild } from './child.js';
import { verifyCleanup } from './cleanup.js';
import { Monitor } from './monitor.js';
import { notStartedAttempt } from './not-started.js';
import { childCudaEnv } from './child-env.js';
import { createOomWatcher } from './oom-watch.js';
import type { AttemptContext, RunPlugin, SuperviseOptions } from './options.js';
import { ProcessTree, type TreeOptions } from './proc-tree.js';
import type { AttemptReport, OomFinding } from './report.js';
import type { BatchPlan } from './retry.js';
import type { Watchdog } from './watchdog.js';

export interface AttemptArgs {
  o: SuperviseOptions;
  plugins: RunPlugin[];
  /** How the tree finds processes that left it (marker, subreaper). */
  tree: TreeOptions;
  watchdog: Watchdog | null;
  attempt: number;
  argv: string[];
  env: Record<string, string>;
  plan: BatchPlan | null;
  chosenUuids: Set<string> | null;
  baselineUuids: Set<string>;
  ctx: AttemptContext;
  now: () => number;
  log: (line: string) => void;
  intervalMs: number;
  graceMs: number;
  setCurrent: (c: CurrentChild | null) => void;
  interrupted: () => NodeJS.Signals | null;
}

/** What the run's signal handlers may do to the attempt's child. */
export type CurrentChild = Pick<RunningChild, 'pid' | 'interrupt' | 'signalLeader'>;

export async function runAttempt(a: AttemptArgs): Promise<AttemptReport> {
  const { o, now, log } = a;
  const startedAtMs = now();
  const baseline = await o.source.readSample();
  const allocConf = a.env.PYTORCH_ALLOC_CONF ?? a.env.PYTORCH_CUDA_ALLOC_CONF;
  // "GPU N" in an OOM is mapped with the CUDA_VISIBLE_DEVICES the processes really have (a launcher may
  // have changed it), so the explanation never contradicts the live device-mismatch warning.
  const cudaEnv = childCudaEnv(a.env.CUDA_VISIBLE_DEVICES);
  let holders: number[] = [];
  const oom = createOomWatcher(() => {
    const visible = cudaEnv.visibleDevices(holders);
    return { ...(allocConf ? { allocConf } : {}), ...(visible ? { cudaVisibleDevices: visible } : {}), gpus: baseline.devices.map((d) => ({ index: d.index, uuid: d.uuid })) };
  });
  const ooms: OomFinding[] = [];
  let child: Awaited<ReturnType<typeof startChild>>;
  try {
    child = await startChild({
      argv: a.argv, env: a.env, cwd: o.cwd ?? process.cwd(),
      stdout: o.stdout ?? process.stdout, stderr: o.stderr ?? process.stderr,
      tailBytes: o.tailBytes ?? 16384, onOutput: (text) => appendAll(ooms, oom.push(text)),
    });
  } catch (error) {
    if (!isGpumemError(error) || error.code !== 'CHILD_FAILED') throw error;
    log(`${error.message}${error.hint ? ` (${error.hint})` : ''}`);
    return notStartedAttempt({ attempt: a.attempt, argv: a.argv, plan: a.plan, ctx: a.ctx, plugins: a.plugins, error, startedAtMs, durationMs: now() - startedAtMs, toleranceBytes: o.toleranceBytes ?? 64 * 1024 * 1024 });
  }
  a.setCurrent(child);
  const tree = new ProcessTree(child.pid, child.pgid, '/proc', a.tree);
  const ctx: AttemptContext = { ...a.ctx, pid: child.pid, wasRunProcess: (pid) => tree.has(pid) };
  for (const plugin of a.plugins) plugin.onSpawn?.(ctx);
  // A signal that arrived between attempts applies to this child at once.
  const pending = a.interrupted();
  if (pending) child.interrupt(pending, a.graceMs);
  a.watchdog?.watchGroup(child.pgid, tree.startTicks ?? 0);
  const knownPids = new Set(baseline.processes.map((p) => p.pid));
  let sampleErrors = 0;
  const monitor = new Monitor({
    source: o.source, tree, chosen: a.chosenUuids, intervalMs: a.intervalMs, now, knownPids,
    onAppeared: (p) => log(`warning: GPU ${p.index}: pid ${p.pid}${p.processName ? ` (${printable(p.processName)})` : ''} appeared holding ${formatBytes(p.maxUsedBytes)} during the run and is not one of its processes (another user's job, or a process that escaped the run)`),
    onTick: (tick) => {
      if (tick.treeProcesses.length > 0) holders = tick.treeProcesses.map((p) => p.pid);
      cudaEnv.note(holders);
      for (const plugin of a.plugins) plugin.onTick?.(tick, ctx);
    },
    onMismatch: (m) => log(`warning: device mismatch: pid ${m.pid} (${printable(m.comm ?? '?')}) holds ${formatBytes(m.usedBytes)} on GPU ${m.index}, which was not chosen — the program bypassed CUDA_VISIBLE_DEVICES (hard-coded device index or set the variable itself)`),
    onError: (error) => { if (sampleErrors++ === 0) log(`warning: reading GPU state failed (${error instanceof Error ? error.message : String(error)}); will keep trying`); },
  });
  monitor.start();
  const exit = await child.exited;
  const endedMs = now();
  await monitor.stop();
  const uuids = new Set([...a.baselineUuids, ...monitor.peakList().map((p) => p.uuid)]);
  const cleanup = await verifyCleanup({
    monitor, tree, baseline, uuids, settleMs: o.settleMs ?? 1000, graceMs: a.graceMs,
    timeoutMs: o.cleanupTimeoutMs ?? 10000, toleranceBytes: o.toleranceBytes ?? 64 * 1024 * 1024, now,
  });
  await child.drain(1000);
  a.watchdog?.groupEnded(child.pgid);
  a.setCurrent(null);
  appendAll(ooms, oom.end());
  for (const l of cleanup.leftovers) log(`leftover pid ${l.pid} (${printable(l.cmdline?.join(' ') ?? l.comm)}) holding ${formatBytes(l.gpuBytes)}: ${l.outcome} — ${l.detail}`);
  if ((cleanup.leftoversNotListed ?? 0) > 0) log(`${cleanup.leftoversNotListed} more leftover processes ended, not listed`);
  for (const l of cleanup.survivors ?? []) log(`error: pid ${l.pid} (${printable(l.cmdline?.join(' ') ?? l.comm)}) of the run is still running after cleanup: ${l.detail}`);
  if (!cleanup.memoryReleased) log(`warning: the run's processes still held GPU memory after ${cleanup.waitedMs} ms`);
  for (const h of cleanup.heldByNothing) log(`warning: GPU ${h.index}: ${formatBytes(h.bytes)} is held by no process after the run (was not before)`);
  const plugins: Record<string, unknown> = {};
  for (const plugin of a.plugins) {
    if (plugin.afterAttempt) plugins[plugin.name] = await plugin.afterAttempt({ ...ctx, exit, ooms });
  }
  const durationMs = endedMs - startedAtMs;
  const peaks = monitor.peakList();
  const utilization = monitor.utilizationList();
  const findings = utilization
    .map((u) => underUsedFinding(u, peaks.find((p) => p.uuid === u.uuid)?.peakBytes ?? 0))
    .filter((f): f is RunFinding => f !== null);
  // A plugin may add findings of its own (the companion: input-bound, batch override from step timing).
  for (const report of Object.values(plugins)) {
    const extra = (report as { findings?: unknown } | null)?.findings;
    if (Array.isArray(extra)) findings.push(...(extra as RunFinding[]));
  }
  return {
    attempt: a.attempt, argv: a.argv, batch: a.plan, startedAtMs, durationMs, exit,
    sampleHz: durationMs > 0 ? Math.round((monitor.samples / durationMs) * 10000) / 10 : 0, samples: monitor.samples,
    peaks, utilization, findings, mismatches: monitor.mismatchList(), appeared: monitor.appearedList(), ooms, oomsNotKept: oom.notKept(), cleanup, interruptedBy: a.interrupted(),
    plugins, outputTail: child.tail(), timeline: monitor.timeline(),
  };
}
