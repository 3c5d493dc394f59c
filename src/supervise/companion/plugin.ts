/**
 * The companion as a `gpumem run` plugin: before each attempt it opens a channel and hands the child the
 * environment; on every monitor tick it splits the tree's GPU memory with the latest PyTorch numbers,
 * keeps the split at the tree's peak per GPU, logs live lines and publishes the statistics for
 * `gpumem diagnose`; after the attempt it closes the channel, joins its OOM captures to the OOMs found in
 * the output and returns a report for the run's JSON and history.
 */
import { foldPytorchSample, finishPytorchSummary, type PytorchGpuSummary } from '../../core/companion/summary.js';
import { splitByGpu, splitProcesses, type GpuSplit, type MemorySplit } from '../../core/companion/split.js';
import type { CompanionMessage, OomMessage } from '../../core/companion/messages.js';
import type { CompanionState } from '../../core/companion/state.js';
import { allocatorAtOom, type AllocatorAtOom } from '../../core/companion/oom-event.js';
import { companionReport, type CompanionReport } from '../../core/companion/report.js';
import { anyDropped } from '../../core/companion/intake.js';
import { foldRankSample, rankSummaries, type RankPeaks } from '../../core/companion/ranks.js';
import { rankFindings } from '../../core/companion/rank-findings.js';
import type { GpuProcess } from '../../core/types.js';
import type { RunPlugin } from '../options.js';
import { errorLine, helloLine, noCudaLine, oomLine, retriesLine, splitLine } from './live-lines.js';
import type { SnapshotOomAnswer } from '../../core/allocator/oom-answer.js';
import { createLivePublisher, type LivePublisher } from './live-publish.js';
import { linkCompanionOoms } from './oom-link.js';
import { CompanionServer, type CompanionServerOptions } from './server.js';
import { SplitTimeline } from './split-timeline.js';
import { ForecastWatch, DEFAULT_FORECAST, type ForecastSettings } from './forecast-watch.js';
import { forecastFindings } from '../../core/forecast/findings.js';
import type { Sample } from '../../core/types.js';

export interface CompanionPlugin extends RunPlugin {
  /** The per-pid state of the running attempt (empty before the first spawn). */
  state(): CompanionState;
  /** The split of the latest tick, for the live view: allocated / reserved / non-PyTorch per GPU. */
  latestSplit(): { processes: MemorySplit[]; gpus: GpuSplit[] } | null;
}

export interface CompanionPluginOptions extends Omit<CompanionServerOptions, 'cudaVisibleDevices'> {
  /** gpumem's own stderr lines (the supervisor's `log`); omitted = silent. */
  log?: (line: string) => void;
  /** Print the per-GPU split every this many ms while the program runs (the first one at once). Default 30000; 0 = only the first. */
  liveIntervalMs?: number;
  /** Publish the latest statistics here for `gpumem diagnose` (store/live); null or omitted = do not. */
  livePath?: string | null;
  /**
   * Reads and replays a snapshot written at an OOM (the allocator simulation's answer for the report); it
   * must not throw and must bound its own time. Omitted = snapshots are only named.
   */
  answerSnapshot?: (path: string) => SnapshotOomAnswer;
  /** When the OOM forecast warns (docs/training-loop.md); default: growth within 1000 steps, and spikes. */
  forecast?: ForecastSettings;
  now?: () => number;
}

/**
 * How many GPUs the job's ranks could use: the GPUs gpumem pinned (UUIDs in CUDA_VISIBLE_DEVICES), else the
 * most devices any process's torch reported; null when neither is known.
 */
function gpusAvailable(visible: string | undefined, state: CompanionState): number | null {
  const pinned = (visible ?? '').split(',').map((s) => s.trim()).filter((s) => /^(GPU|MIG)-/.test(s));
  if (pinned.length > 0) return pinned.length;
  const seen = Math.max(0, ...[...state.values()].map((p) => p.identities.length));
  return seen > 0 ? seen : null;
}

/** Snapshots answered per attempt: each replay costs seconds, and the first OOMs are the telling ones. */
const MAX_ANSWERED_SNAPSHOTS = 3;

/**
 * Creates the plugin. Options are the channel settings (rate, snapshot folder, memory fraction) and the
 * live extras (log, live file); the CUDA_VISIBLE_DEVICES the supervisor planned is read from the attempt's
 * environment.
 */
export function companionPlugin(options: CompanionPluginOptions = {}): CompanionPlugin {
  const { log, liveIntervalMs = 30000, livePath = null, answerSnapshot, forecast = DEFAULT_FORECAST, now = Date.now, ...channel } = options;
  let server: CompanionServer | null = null;
  let latest: CompanionReport['lastSplit'] = null;
  let state: CompanionState = new Map();
  let atPeak = new Map<string, PytorchGpuSummary>();
  let splitTimeline = new SplitTimeline();
  let rankPeaks: RankPeaks = new Map();
  let indexOf: (uuid: string) => number | null = () => null;
  let lastLiveMs: number | null = null;
  let publisher: LivePublisher | null = null;
  const retriesSeen = new Map<string, number>();
  let forecasts = new ForecastWatch(forecast);
  let lastSample: Sample | null = null;
  let lastForecastMs: number | null = null;

  const onMessage = (m: CompanionMessage, s: CompanionState): void => {
    channel.onMessage?.(m, s);
    if (!log) return;
    if (m.type === 'hello') log(helloLine(m));
    else if (m.type === 'cuda') log(noCudaLine(m.pid, m.problem));
    else if (m.type === 'error') log(errorLine(m.pid, m.what, m.message));
    else if (m.type === 'oom') {
      const uuid = s.get(m.pid)?.devices.get(m.device)?.gpuUuid ?? null;
      log(oomLine(allocatorAtOom(m, uuid), uuid === null ? null : indexOf(uuid), m.snapshotError));
    }
    if (m.type === 'stats' || m.type === 'oom') {
      for (const d of s.get(m.pid)?.devices.values() ?? []) {
        const key = `${m.pid}/${d.device}`;
        const retries = d.maxNumAllocRetries ?? 0;
        const seen = retriesSeen.get(key) ?? 0;
        // First rise, then each doubling: a run that retries all the time should not flood the terminal.
        if (retries > 0 && (seen === 0 ? retries > 0 : retries >= 2 * seen)) {
          retriesSeen.set(key, retries);
          log(retriesLine(m.pid, d.device, retries));
        }
      }
    }
  };

  const splitOf = (processes: readonly GpuProcess[]): MemorySplit[] => splitProcesses(processes, state);

  return {
    name: 'companion',
    async beforeSpawn(ctx) {
      await server?.close(0);
      latest = null;
      atPeak = new Map();
      splitTimeline = new SplitTimeline();
      rankPeaks = new Map();
      lastLiveMs = null;
      retriesSeen.clear();
      forecasts = new ForecastWatch(forecast);
      lastSample = null;
      lastForecastMs = null;
      try {
        server = await CompanionServer.start({ ...channel, onMessage, cudaVisibleDevices: ctx.env.CUDA_VISIBLE_DEVICES ?? null });
      } catch (error) {
        // The companion is an extra: without its channel the program runs exactly as it would without gpumem's help.
        server = null;
        state = new Map();
        log?.(`warning: PyTorch companion unavailable (${(error as Error).message}); running without it`);
        return {};
      }
      state = server.state;
      const watch = forecasts;
      publisher = livePath ? createLivePublisher(livePath, state, now, log, (pid) => watch.forecastsOf(pid)) : null;
      return server.env(ctx.env);
    },
    onSpawn(ctx) {
      // The child's own messages are then kept even when they are read after it exited (server.vouchFor), and
      // so are those of every process the run's tree scans found (workers, ranks).
      if (ctx.pid !== undefined) server?.vouchFor(ctx.pid);
      if (ctx.wasRunProcess) server?.vouchForMembers(ctx.wasRunProcess);
    },
    onTick(tick) {
      indexOf = (uuid) => tick.sample.devices?.find((d) => d.uuid === uuid)?.index ?? null;
      const rows = splitOf(tick.treeProcesses);
      if (rows.length > 0) {
        latest = { processes: rows, gpus: splitByGpu(rows) };
        splitTimeline.note(tick.tMs, latest.gpus);
      }
      foldPytorchSample(atPeak, tick.tMs, rows, tick.treeBytes, indexOf);
      foldRankSample(rankPeaks, tick.treeProcesses, rows);
      lastSample = tick.sample;
      for (const line of forecasts.update(state, tick.sample, indexOf)) log?.(line);
      publisher?.maybePublish();
      // Apart from the split: a process may have step records while NVML shows no memory for the tree.
      const forecastLines = log ? forecasts.lines() : [];
      if (forecastLines.length > 0 && (lastForecastMs === null || (liveIntervalMs > 0 && tick.tMs - lastForecastMs >= liveIntervalMs))) {
        lastForecastMs = tick.tMs;
        for (const line of forecastLines) log?.(line);
      }
      if (log && rows.length > 0 && (lastLiveMs === null || (liveIntervalMs > 0 && tick.tMs - lastLiveMs >= liveIntervalMs))) {
        lastLiveMs = tick.tMs;
        const current = new Map<string, ReturnType<typeof finishPytorchSummary>[number]>();
        foldPytorchSample(current, tick.tMs, rows, tick.treeBytes, indexOf);
        for (const s of finishPytorchSummary(current, state).filter((g) => current.has(g.gpuUuid))) log(splitLine(s));
      }
    },
    async afterAttempt(ctx) {
      if (!server) return companionReport(new Map(), null, []);
      await server.close();
      publisher?.remove();
      publisher = null;
      const findings = ctx.ooms ?? [];
      const env = ctx.env;
      const allocConf = env.PYTORCH_ALLOC_CONF ?? env.PYTORCH_CUDA_ALLOC_CONF;
      const unprinted = linkCompanionOoms(findings, server.state, {
        ...(allocConf ? { allocConf } : {}),
        ...(env.CUDA_VISIBLE_DEVICES ? { cudaVisibleDevices: env.CUDA_VISIBLE_DEVICES } : {}),
      });
      const gpus = finishPytorchSummary(atPeak, server.state);
      const report = companionReport(server.state, latest, server.problems, gpus, unprinted);
      // The companion's last records arrive with its exit, after the last tick.
      for (const line of forecasts.update(server.state, lastSample, indexOf)) log?.(line);
      for (const p of report.processes) {
        const f = forecasts.forecastsOf(p.pid);
        if (f.length > 0) p.forecast = f;
      }
      report.findings = [...(report.findings ?? []), ...report.processes.flatMap((p) => forecastFindings(p.pid, p.forecast ?? []))];
      report.splitTimeline = splitTimeline.list();
      const ranks = rankSummaries(server.state, rankPeaks);
      if (ranks.length > 0) {
        report.ranks = ranks;
        report.findings = [...(report.findings ?? []), ...rankFindings(ranks, gpusAvailable(env.CUDA_VISIBLE_DEVICES, server.state))];
      }
      if (anyDropped(server.drops) || server.problemsDropped > 0) report.notKept = { ...server.drops, problemLines: server.problemsDropped };
      if (answerSnapshot && report.snapshots.length > 0) report.snapshotAnswers = report.snapshots.slice(0, MAX_ANSWERED_SNAPSHOTS).map(answerSnapshot);
      return report;
    },
    state: () => state,
    latestSplit: () => latest,
  };
}
