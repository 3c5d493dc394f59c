/**
 * `superviseRun`: the programmatic core of `gpumem run`. Pre-flight, environment, spawn, watch at 10 Hz,
 * forward signals, detect OOMs, verify cleanup, retry with a smaller batch — and return one RunReport.
 */
import { formatBytes } from '../core/units.js';
import { verifyCleanup } from './cleanup.js';
import { startChild } from './child.js';
import { formatDecision, planEnv, type EnvDecision } from './env.js';
import { chooseGpus } from './gpus.js';
import { Monitor } from './monitor.js';
import { createOomWatcher } from './oom-watch.js';
import { checkSuperviseNumbers, type AttemptContext, type SuperviseOptions } from './options.js';
import { checkFree, describePreflight } from './preflight.js';
import { ProcessTree } from './proc-tree.js';
import { RUN_SCHEMA_VERSION, type AttemptReport, type GpuPeak, type OomFinding, type RunReport } from './report.js';
import { initialBatchPlan, nextBatchPlan, substitute, type BatchPlan } from './retry.js';

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs a command under supervision and resolves with its report once the child and its whole tree are
 * gone (or ended) and the GPU memory check is done. Throws GpumemError only for problems before the first
 * spawn (bad --gpus, pre-flight, command not found); everything after is in the report.
 */
export async function superviseRun(o: SuperviseOptions): Promise<RunReport> {
  checkSuperviseNumbers(o);
  const now = o.now ?? Date.now;
  const log = o.log ?? ((line: string) => void process.stderr.write(`gpumem: ${line}\n`));
  const startedAtMs = now();
  const intervalMs = o.intervalMs ?? 100;
  const graceMs = o.graceMs ?? 5000;
  let plan: BatchPlan | null = initialBatchPlan(o.argv, o.batch, o.accum);

  const baseline = await o.source.readSample();
  const choice = chooseGpus(o.gpus, baseline);
  const chosenDevices = choice?.devices ?? baseline.devices.filter((d) => d.uuid !== null);
  const preflight = describePreflight(chosenDevices, baseline);
  checkFree(preflight, o.requireFree ?? null);
  for (const g of preflight) {
    const others = g.otherProcesses.length === 0 ? 'no other processes'
      : `${g.otherProcesses.length} other process(es): ${g.otherProcesses.map((p) => `pid ${p.pid} ${formatBytes(p.usedBytes)}`).join(', ')}`;
    log(`pre-flight GPU ${g.index}: ${formatBytes(g.freeBytes)} free of ${formatBytes(g.totalBytes)}, ${others}`);
  }
  if (choice) log(`GPU choice ${choice.reason}`);

  const base = o.env ?? process.env;
  const { decisions, env: plannedEnv } = planEnv(base, { gpus: choice?.devices ?? null, allocConf: o.allocConf ?? true, extra: o.extraEnv });
  for (const d of decisions) log(`env ${formatDecision(d)}`);
  const envDecisions: EnvDecision[] = [...decisions];

  let interruptedBy: NodeJS.Signals | null = null;
  let current: { interrupt(sig: NodeJS.Signals, graceMs: number): void } | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    interruptedBy ??= sig;
    log(`received ${sig}; forwarding to the child's process group (then SIGTERM, then SIGKILL, ${graceMs} ms apart)`);
    current?.interrupt(sig, graceMs);
  };
  const handlers = new Map<NodeJS.Signals, () => void>();
  if (o.forwardSignals) for (const sig of FORWARDED) {
    const h = (): void => onSignal(sig);
    handlers.set(sig, h);
    process.on(sig, h);
  }
  const onAbort = (): void => {
    // abort('SIGINT') interrupts like Ctrl-C would; any other reason like SIGTERM.
    const reason: unknown = o.signal?.reason;
    onSignal(typeof reason === 'string' && /^SIG[A-Z]+$/.test(reason) ? (reason as NodeJS.Signals) : 'SIGTERM');
  };
  o.signal?.addEventListener('abort', onAbort);

  const attempts: AttemptReport[] = [];
  let retryNote: string | null = null;
  const chosenUuids = choice ? new Set(choice.devices.map((d) => d.uuid as string)) : null;
  try {
    for (let attempt = 1; ; attempt++) {
      const argv = substitute(o.argv, plan);
      const env = { ...plannedEnv };
      if (plan) {
        env.GPUMEM_BATCH = String(plan.batch);
        env.GPUMEM_ACCUM = String(plan.accum);
      }
      const ctx: AttemptContext = { attempt, batch: plan, env };
      for (const plugin of o.plugins ?? []) {
        const added = await plugin.beforeSpawn?.(ctx);
        for (const [name, value] of Object.entries(added ?? {})) {
          const d: EnvDecision = { name, value, previous: env[name] ?? null, action: 'set', reason: `added by ${plugin.name}` };
          env[name] = value;
          if (attempt === 1) {
            envDecisions.push(d);
            log(`env ${formatDecision(d)}`);
          }
        }
      }
      if (plan) log(`attempt ${attempt}: batch ${plan.batch}, accum ${plan.accum} (effective ${plan.batch * plan.accum}): ${argv.join(' ')}`);
      const report = await runAttempt({ o, attempt, argv, env, plan, chosenUuids, baselineUuids: new Set(chosenDevices.map((d) => d.uuid as string)), ctx, now, log, intervalMs, graceMs,
        setCurrent: (c) => (current = c), interrupted: () => interruptedBy });
      attempts.push(report);
      const failed = report.exit.code !== 0 || report.exit.signal !== null;
      if (!failed || report.ooms.length === 0 || interruptedBy) break;
      if (attempts.length > (o.retryOom ?? 0)) {
        if ((o.retryOom ?? 0) > 0) retryNote = `gave up after ${o.retryOom} OOM retr${o.retryOom === 1 ? 'y' : 'ies'}`;
        break;
      }
      const next = plan ? nextBatchPlan(plan) : null;
      if (!next) {
        retryNote = plan ? 'OOM at batch 1: cannot shrink further' : 'OOM, but the command has no {batch} to shrink (add --batch and {batch})';
        log(`not retrying: ${retryNote}`);
        break;
      }
      const changed = next.batch * next.accum !== (plan as BatchPlan).batch * (plan as BatchPlan).accum;
      log(`OOM on attempt ${attempt}; retrying with batch ${next.batch}, accum ${next.accum}${changed ? ` (effective batch changes to ${next.batch * next.accum}: odd batch)` : ''}`);
      plan = next;
    }
  } finally {
    for (const [sig, h] of handlers) process.off(sig, h);
    o.signal?.removeEventListener('abort', onAbort);
  }
  const last = attempts[attempts.length - 1] as AttemptReport;
  return {
    schemaVersion: RUN_SCHEMA_VERSION, argv: o.argv, cwd: o.cwd ?? process.cwd(), startedAtMs, durationMs: now() - startedAtMs,
    gpus: choice ? choice.devices.map((d) => ({ index: d.index, uuid: d.uuid as string, name: d.name })) : null,
    gpuReason: choice?.reason ?? null, env: envDecisions, preflight, attempts,
    retries: attempts.length - 1, retryNote, exit: last.exit, peaks: mergePeaks(attempts),
  };
}

/** Per-GPU maximum over attempts. */
function mergePeaks(attempts: readonly AttemptReport[]): GpuPeak[] {
  const byUuid = new Map<string, GpuPeak>();
  for (const a of attempts) for (const p of a.peaks) {
    const prev = byUuid.get(p.uuid);
    if (!prev || p.peakBytes > prev.peakBytes) byUuid.set(p.uuid, { ...p, unknownSamples: (prev?.unknownSamples ?? 0) + p.unknownSamples });
    else prev.unknownSamples += p.unknownSamples;
  }
  return [...byUuid.values()].sort((a, b) => a.index - b.index);
}

interface AttemptArgs {
  o: SuperviseOptions;
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
  setCurrent: (c: { interrupt(sig: NodeJS.Signals, graceMs: number): void } | null) => void;
  interrupted: () => NodeJS.Signals | null;
}

async function runAttempt(a: AttemptArgs): Promise<AttemptReport> {
  const { o, now, log } = a;
  const startedAtMs = now();
  const baseline = await o.source.readSample();
  const oom = createOomWatcher({
    ...(a.env.PYTORCH_CUDA_ALLOC_CONF ?? a.env.PYTORCH_ALLOC_CONF ? { allocConf: a.env.PYTORCH_CUDA_ALLOC_CONF ?? a.env.PYTORCH_ALLOC_CONF } : {}),
    ...(a.env.CUDA_VISIBLE_DEVICES ? { cudaVisibleDevices: a.env.CUDA_VISIBLE_DEVICES } : {}),
  });
  const ooms: OomFinding[] = [];
  const child = await startChild({
    argv: a.argv, env: a.env, cwd: o.cwd ?? process.cwd(),
    stdout: o.stdout ?? process.stdout, stderr: o.stderr ?? process.stderr,
    tailBytes: o.tailBytes ?? 16384, onOutput: (text) => ooms.push(...oom.push(text)),
  });
  a.setCurrent(child);
  const ctx: AttemptContext = { ...a.ctx, pid: child.pid };
  for (const plugin of o.plugins ?? []) plugin.onSpawn?.(ctx);
  // A signal that arrived between attempts applies to this child at once.
  const pending = a.interrupted();
  if (pending) child.interrupt(pending, a.graceMs);
  const tree = new ProcessTree(child.pid, child.pgid);
  let sampleErrors = 0;
  const monitor = new Monitor({
    source: o.source, tree, chosen: a.chosenUuids, intervalMs: a.intervalMs, now,
    onTick: (tick) => { for (const plugin of o.plugins ?? []) plugin.onTick?.(tick, ctx); },
    onMismatch: (m) => log(`warning: device mismatch: pid ${m.pid} (${m.comm ?? '?'}) holds ${formatBytes(m.usedBytes)} on GPU ${m.index}, which was not chosen — the program bypassed CUDA_VISIBLE_DEVICES (hard-coded device index or set the variable itself)`),
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
  a.setCurrent(null);
  ooms.push(...oom.end());
  for (const l of cleanup.leftovers) log(`leftover pid ${l.pid} (${l.cmdline?.join(' ') ?? l.comm}) holding ${formatBytes(l.gpuBytes)}: ${l.outcome} — ${l.detail}`);
  if (!cleanup.memoryReleased) log(`warning: the run's processes still held GPU memory after ${cleanup.waitedMs} ms`);
  for (const h of cleanup.heldByNothing) log(`warning: GPU ${h.index}: ${formatBytes(h.bytes)} is held by no process after the run (was not before)`);
  const plugins: Record<string, unknown> = {};
  for (const plugin of o.plugins ?? []) {
    if (plugin.afterAttempt) plugins[plugin.name] = await plugin.afterAttempt({ ...ctx, exit, ooms });
  }
  const durationMs = endedMs - startedAtMs;
  return {
    attempt: a.attempt, argv: a.argv, batch: a.plan, startedAtMs, durationMs, exit,
    sampleHz: durationMs > 0 ? Math.round((monitor.samples / durationMs) * 10000) / 10 : 0, samples: monitor.samples,
    peaks: monitor.peakList(), mismatches: monitor.mismatchList(), ooms, cleanup, interruptedBy: a.interrupted(),
    plugins, outputTail: child.tail(), timeline: monitor.timeline(),
  };
}
