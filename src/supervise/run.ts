/**
 * `superviseRun`: the programmatic core of `gpumem run`. Pre-flight, environment, spawn, watch at 10 Hz,
 * forward signals, detect OOMs, verify cleanup, retry with a smaller batch — and return one RunReport.
 */
import { randomBytes } from 'node:crypto';
import { formatBytes } from '../core/units.js';
import { becomeChildSubreaper } from '../sources/index.js';
import { runAttempt } from './attempt.js';
import { formatDecision, planEnv, type EnvDecision } from './env.js';
import { chooseGpus } from './gpus.js';
import { checkSuperviseNumbers, type AttemptContext, type RunPlugin, type SuperviseOptions } from './options.js';
import { checkFree, describePreflight } from './preflight.js';
import { RUN_SCHEMA_VERSION, type AttemptReport, type GpuPeak, type RunReport } from './report.js';
import { initialBatchPlan, nextBatchPlan, substitute, type BatchPlan } from './retry.js';
import { startWatchdog } from './watchdog.js';
import type { CurrentChild } from './attempt.js';

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/**
 * Passed on to the command and nothing more: they ask the training to do something (Lightning requeues a Slurm
 * job on SIGUSR1), not to stop. Only the command itself gets them, not its group: a DataLoader worker or a rank
 * has no handler and would die of one, and the scheduler meant the process it started.
 */
const PASSED_ON: NodeJS.Signals[] = ['SIGUSR1', 'SIGUSR2'];

/**
 * Runs a command under supervision and resolves with its report once the child and its whole tree are
 * gone (or ended) and the GPU memory check is done. Throws GpumemError only for problems found before
 * `onReady` (bad --gpus, pre-flight); a program that cannot be started ends the run with status 127 (not
 * found) or 126 (not executable) and `startError` in the report, like a shell.
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
    // "outside this run": the report's split counts the run's own processes, so both can be read side by side.
    const held = g.otherProcesses.reduce((sum, p) => sum + (p.usedBytes ?? 0), 0);
    const others = g.otherProcesses.length === 0 ? 'no process outside this run'
      : `${g.otherProcesses.length} process${g.otherProcesses.length === 1 ? '' : 'es'} outside this run hold ${formatBytes(held)}: ${g.otherProcesses.map((p) => `pid ${p.pid} ${formatBytes(p.usedBytes)}`).join(', ')}`;
    log(`pre-flight GPU ${g.index}: ${formatBytes(g.freeBytes)} free of ${formatBytes(g.totalBytes)}, ${others}`);
  }
  if (choice) log(`GPU choice ${choice.reason}`);
  // Everything that can refuse the run has been checked: now the caller may record it.
  const plugins: RunPlugin[] = [...(o.plugins ?? []), ...(o.onReady?.() ?? [])];

  const base = o.env ?? process.env;
  const { decisions, env: plannedEnv } = planEnv(base, { gpus: choice?.devices ?? null, allocConf: o.allocConf ?? true, extra: o.extraEnv });
  for (const d of decisions) log(`env ${formatDecision(d)}`);
  const envDecisions: EnvDecision[] = [...decisions];
  // Every process of the run inherits this marker unless it scrubs its environment; the tree scan and the
  // watchdog find escaped processes by it (and, as a child subreaper, gpumem inherits those that scrub it).
  const markValue = `${process.pid}-${startedAtMs}-${randomBytes(4).toString('hex')}`;
  plannedEnv.GPUMEM_RUN_MARK = markValue;
  const mark: EnvDecision = { name: 'GPUMEM_RUN_MARK', value: markValue, previous: base.GPUMEM_RUN_MARK ?? null, action: 'set', reason: 'marks the run\'s processes, so one that leaves the process tree is still found and ended' };
  envDecisions.push(mark);
  log(`env ${formatDecision(mark)}`);
  const adopter = o.subreaper === true && becomeChildSubreaper() ? process.pid : null;
  const watchdog = o.watchdog === false ? null : startWatchdog(`GPUMEM_RUN_MARK=${markValue}`, graceMs, process.env);
  const tree = { marker: `GPUMEM_RUN_MARK=${markValue}`, adopter, exclude: new Set(watchdog?.pid ? [watchdog.pid] : []) };

  let interruptedBy: NodeJS.Signals | null = null;
  let current: CurrentChild | null = null;
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
  if (o.forwardSignals) for (const sig of PASSED_ON) {
    const h = (): void => {
      const passed = current?.signalLeader(sig) === true;
      log(passed ? `received ${sig}; passed it on to the command (pid ${current?.pid})` : `received ${sig}; no command is running to pass it on to`);
    };
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
      for (const plugin of plugins) {
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
      const report = await runAttempt({ o, plugins, tree, watchdog, attempt, argv, env, plan, chosenUuids, baselineUuids: new Set(chosenDevices.map((d) => d.uuid as string)), ctx, now, log, intervalMs, graceMs,
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
    watchdog?.release();
    for (const [sig, h] of handlers) process.off(sig, h);
    o.signal?.removeEventListener('abort', onAbort);
  }
  const last = attempts[attempts.length - 1] as AttemptReport;
  return {
    schemaVersion: RUN_SCHEMA_VERSION, argv: o.argv, cwd: o.cwd ?? process.cwd(), startedAtMs, durationMs: now() - startedAtMs,
    gpus: choice ? choice.devices.map((d) => ({ index: d.index, uuid: d.uuid as string, name: d.name })) : null,
    gpuReason: choice?.reason ?? null, env: envDecisions, preflight, attempts,
    retries: attempts.length - 1, retryNote, exit: last.exit, peaks: mergePeaks(attempts), startError: last.startError ?? null,
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
