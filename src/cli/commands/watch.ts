/**
 * `gpumem watch`: the live terminal view. A LiveSampler reads the GPUs (or plays a recording) into its
 * ring buffer; on every sample the window of recent samples is diagnosed (core/diagnose) and the frame is
 * rendered (cli/watch/view) and drawn with line diffing (cli/watch/screen). Keys change the view state
 * (cli/watch/state); the kill key goes through the same checks as `gpumem kill`.
 */
import { userInfo } from 'node:os';
import { GpumemError, type Sample } from '../../core/index.js';
import { compareSamples, thinWindow } from '../../core/watch/index.js';
import { diagnose, patchReport, sameAncestors, type DiagnoseReport } from '../../core/diagnose/index.js';
import type { HostFacts } from '../../core/index.js';
import { detectPidNamespace, LiveSampler, readAncestors, thinnedToPeriod } from '../../orchestrate/index.js';
import { readLiveCompanion, type LiveCompanionEntry } from '../../store/index.js';
import type { CommandHandler } from '../context.js';
import type { WatchOptions } from '../options/gpus.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { watchFields } from '../nvml-fields.js';
import { isReplaySource, openSource } from '../../sources/index.js';
import { testDevicePrefix } from './kill.js';
import { killFromView } from '../watch/kill-action.js';
import { orderRows, selectablePids, type ProcessRow } from '../watch/process-panel.js';
import { FindingsPace } from '../watch/findings-pace.js';
import { initialState, onKey, splitKeys, type WatchState } from '../watch/state.js';
import { takeTerminal } from '../watch/terminal.js';
import { renderFrame } from '../watch/view.js';

/**
 * The findings line diagnoses the last FINDINGS_SPAN_MS thinned to FINDINGS_SAMPLES samples (idleness and
 * growth need a window): long enough to hold two rounds of /proc re-reads (RESTAT_EVERY_MS), so "used no CPU"
 * is measured between two readings; a window holding one reading says "unknown", never "idle".
 */
const FINDINGS_SPAN_MS = 65_000;
const FINDINGS_SAMPLES = 10;
/** A sample equal to the one on screen redraws only this often: for the ages and the sparklines. */
const REDRAW_UNCHANGED_EVERY_MS = 10_000;
/**
 * A process off screen has its state, parent and CPU ticks re-read from /proc this often, all in one round,
 * not every sample (512 stat reads were most of a sample's cost); the rows on screen every
 * FOCUS_RESTAT_EVERY_MS, which is also the span of their CPU %. Kill re-reads what it decides on itself.
 */
const RESTAT_EVERY_MS = 30_000;
const FOCUS_RESTAT_EVERY_MS = 2000;
/** Longest real wait between two replayed samples: a gap in a recording (the recorder was off) is not waited out. */
const REPLAY_MAX_WAIT_MS = 5000;

/**
 * The wait before the next replayed sample: the recorded gap divided by the speed, at least 10 ms and at most
 * REPLAY_MAX_WAIT_MS; `intervalMs` where the recording gives no forward gap (the end, equal timestamps).
 */
export function replayDelayMs(shownMs: number, nextMs: number | null, speed: number, intervalMs: number): number {
  if (nextMs === null || !(nextMs > shownMs)) return intervalMs;
  return Math.min(REPLAY_MAX_WAIT_MS, Math.max(10, (nextMs - shownMs) / speed));
}

/** Samples the process and device panels look back over (the widest sparkline, the trend window). */
const HISTORY_ON_SCREEN = 128;
/** The history keeps ten minutes: the last HISTORY_ON_SCREEN samples at full rate, older ones about one a second. */
const HISTORY_SPAN_MS = 600_000;
const HISTORY_THIN_EVERY_MS = 1000;
/** The companion's live files (PyTorch's split of supervised runs) are read at most this often. */
const COMPANION_EVERY_MS = 1000;
/** Parents of GPU processes change rarely: their /proc facts are re-read this often, not every sample. */
const ANCESTORS_EVERY_MS = 5000;

export const run: CommandHandler<WatchOptions> = async (ctx) => {
  const o = ctx.args.options;
  if (!ctx.stdout.isTTY) {
    throw new GpumemError('USAGE', 'gpumem watch needs a terminal on stdout', { hint: 'for a log or a pipe use gpumem status --watch (or record)' });
  }
  const replay = o.replay !== undefined;
  let focus: ReadonlySet<number> = new Set();
  let focusGpus: ReadonlySet<number> = new Set();
  const source = await openSource({
    ...sourceOptionsFromContext(ctx),
    proc: { restatEveryMs: RESTAT_EVERY_MS, focusRestatEveryMs: FOCUS_RESTAT_EVERY_MS, focusPids: () => focus, liveUsage: true, reuseRows: true },
    nvml: watchFields((gpu) => focusGpus.has(gpu)),
  });
  const killOptions = { devicePrefix: replay || o.readonly ? undefined : testDevicePrefix(ctx) };
  const live = !replay;
  const info = live ? userInfo() : null;
  const viewer = info ? { uid: info.uid, user: info.username } : null;
  const pidNamespace = live ? detectPidNamespace() : 'unknown';
  const intervalFor = (speed: number): number => Math.max(10, Math.round(o.interval / speed));
  let state: WatchState = initialState(o.readonly || replay, o.speed);
  let ended = false;
  const recording = isReplaySource(source) ? source : null;
  const sampler = new LiveSampler(source, {
    intervalMs: intervalFor(state.speed),
    thin: { recent: HISTORY_ON_SCREEN, everyMs: HISTORY_THIN_EVERY_MS, spanMs: HISTORY_SPAN_MS },
    // A replay plays at the pace it was recorded (× speed), whatever --interval says.
    nextDelayMs: recording ? (sample, intervalMs) => replayDelayMs(sample.timeMs, recording.nextTimeMs(), state.speed, intervalMs) : undefined,
    onError: (error) => {
      if (replay && source.kind === 'replay') {
        ended = true;
        void sampler.stop();
        state = { ...state, message: 'end of recording (q quits)' };
        draw();
      } else state = { ...state, message: `sampling failed: ${error instanceof Error ? error.message : String(error)}` };
    },
  });
  let ancestors: Record<number, HostFacts> = {};
  let ancestorsAtMs = -Infinity;
  let report: DiagnoseReport | null = null;
  /** The sample and inputs `report` was built or last patched from. */
  let reportBasis: { sample: Sample; ancestors: Record<number, HostFacts>; companion: Record<number, LiveCompanionEntry> } | null = null;
  let findings: DiagnoseReport['findings'] = [];
  let findingsAtMs = -Infinity;
  const findingsPace = new FindingsPace();
  let changedSinceFindings = true;
  /** Time of the newest sample whose numbers moved (see compareSamples). */
  let changedAtMs = Infinity;
  let supervised = false;
  let companion: Record<number, LiveCompanionEntry> = {};
  let companionAtMs = -Infinity;
  let latest: Sample | undefined;
  let drawnAtMs = -Infinity;
  let rowPids: number[] = [];

  // Times are the samples' own, so a replay's findings and redraws follow the recorded clock.
  const analyse = (sample: Sample): boolean => {
    const previous = latest;
    latest = sample;
    const atMs = sample.timeMs;
    const compared = report === null || previous === undefined ? 'changed' : compareSamples(previous, sample, focus);
    // Only drawn numbers moved ('numbers'): findings refresh at a change's pace, but no view, tree or bar is rebuilt.
    const changed = compared === 'changed';
    if (changed || compared === 'numbers') {
      changedSinceFindings = true;
      changedAtMs = atMs;
    }
    const backwards = atMs < findingsAtMs || atMs < drawnAtMs;
    const findingsDue = backwards || atMs - findingsAtMs >= findingsPace.periodMs(changedSinceFindings, recording ? state.speed : 1);
    const redrawDue = backwards || compared === 'shown' || compared === 'numbers' || atMs - drawnAtMs >= REDRAW_UNCHANGED_EVERY_MS;
    // Skip work nobody would see: equal numbers change nothing on screen but ages and sparklines.
    if (!changed && !findingsDue && !redrawDue) return false;
    drawnAtMs = atMs;
    // A supervised run's PyTorch split moves without NVML's numbers moving: re-read it at each redraw.
    if (!changed && !findingsDue && !supervised) return true;
    // Inputs equal to the previous ones stay the same objects: the report can then be patched, not rebuilt.
    if (live && atMs - ancestorsAtMs >= ANCESTORS_EVERY_MS) {
      const read = readAncestors(sample, {}, ancestors);
      if (!sameAncestors(ancestors, read)) ancestors = read;
      ancestorsAtMs = atMs;
    }
    if (live && (atMs - companionAtMs >= COMPANION_EVERY_MS || atMs < companionAtMs)) {
      const read = readLiveCompanion(ctx.env);
      if (read.size > 0 || supervised) companion = Object.fromEntries(read);
      companionAtMs = atMs;
      supervised = read.size > 0;
    }
    const input = { viewer, pidNamespace, ancestors, companion };
    if (findingsDue) {
      const window = thinWindow(sampler.history(), FINDINGS_SPAN_MS, FINDINGS_SAMPLES);
      // A window in which no number moved diagnoses the same from its two ends (means, maxima, idleness, growth
      // and the CPU ticks between the oldest and newest /proc readings are those of the whole window): the
      // steady state's refresh reads two samples, not ten. Only the sample counts quoted in evidence differ.
      const still = window.length > 2 && (window[0] as Sample).timeMs >= changedAtMs;
      findings = findingsPace.timed(() => diagnose({ ...input, samples: still ? [window[0] as Sample, window[window.length - 1] as Sample] : window }).findings);
      findingsAtMs = atMs;
      changedSinceFindings = false;
    }
    // No rules here: the rows and bars need the accounting only; findings come from the window above. Where
    // only memory moved since the report (rows growing, nothing starting or ending), only what moved is redone.
    const basis = reportBasis;
    const patched = basis !== null && report !== null && basis.ancestors === ancestors && basis.companion === companion
      ? patchReport(report, basis.sample, sample, companion) : null;
    report = { ...(patched ?? diagnose({ ...input, samples: [sample] }, [])), findings };
    reportBasis = { sample, ancestors, companion };
    return true;
  };

  let resolveQuit: () => void = () => {};
  const quit = new Promise<void>((resolve) => (resolveQuit = resolve));
  // Rows are ordered again only when the report, the sort or the filter changed.
  let ordered: { report: DiagnoseReport; sort: WatchState['sort']; filter: string; rows: ProcessRow[] } | null = null;
  const onShown = (pids: readonly number[], gpus: readonly number[]): void => {
    if (pids.length !== focus.size || pids.some((pid) => !focus.has(pid))) focus = new Set(pids);
    if (gpus.length !== focusGpus.size || gpus.some((g) => !focusGpus.has(g))) focusGpus = new Set(gpus);
  };
  const draw = (): void => {
    if (!latest || !report) return;
    if (ordered?.report !== report || ordered.sort !== state.sort || ordered.filter !== state.filter) {
      ordered = { report, sort: state.sort, filter: state.filter, rows: orderRows(report, state) };
      rowPids = selectablePids(ordered.rows);
    }
    if (state.selectedPid === null || !rowPids.includes(state.selectedPid)) state = { ...state, selectedPid: rowPids[0] ?? null };
    term.screen.draw(renderFrame({
      // The panels look back at most HISTORY_ON_SCREEN samples; the detail panel over the whole history, on one
      // time axis (about a sample a second, as the older part of the history is kept).
      sample: latest, history: state.detailPid === null ? sampler.history(HISTORY_ON_SCREEN) : thinnedToPeriod(sampler.history(), HISTORY_THIN_EVERY_MS), report, rows: ordered.rows, viewerUid: viewer?.uid ?? null, state,
      columns: term.columns(), height: term.rows(), color: ctx.color, onShown: live ? onShown : undefined,
      steps: state.detailPid === null ? undefined : { [state.detailPid]: companion[state.detailPid]?.steps },
      forecasts: state.detailPid === null ? undefined : { [state.detailPid]: companion[state.detailPid]?.forecast },
    }));
  };
  const handleInput = (chunk: string): void => {
    for (const key of splitKeys(chunk)) handleKey(key);
    draw();
  };
  const handleKey = (key: string): void => {
    const [next, effect] = onKey(state, key, rowPids);
    state = next;
    if (effect?.kind === 'quit') resolveQuit();
    else if (effect?.kind === 'pause') {
      if (effect.paused) void sampler.stop();
      else if (!ended) void sampler.start();
    } else if (effect?.kind === 'speed') sampler.setIntervalMs(intervalFor(effect.speed));
    else if (effect?.kind === 'seek') {
      if (!recording) {
        state = { ...state, message: 'seeking works in a replay (--replay FILE)' };
        return;
      }
      const shown = recording.sampleCount - recording.remaining() - 1;
      const at = recording.seek(shown + effect.samples);
      // The history restarts at the new place: sparklines and trends never mix two stretches of the recording.
      sampler.clear();
      [latest, report, reportBasis] = [undefined, null, null];
      state = { ...state, message: `sample ${at + 1} of ${recording.sampleCount}` };
      if (state.paused) void sampler.sampleNow();
      else if (ended) {
        ended = false;
        void sampler.start();
      }
    }
    else if (effect?.kind === 'kill' && latest) {
      const seen = latest;
      state = { ...state, message: `ending pid ${effect.pid}…` };
      void killFromView(effect.pid, seen, source, { allUsers: o.allUsers, graceMs: o.graceMs, killOptions })
        .then((line) => (state = { ...state, message: line }))
        .catch((error: unknown) => (state = { ...state, message: `kill failed: ${error instanceof Error ? error.message : String(error)}` }))
        .finally(draw);
    }
  };
  const term = takeTerminal(ctx.stdin, ctx.stdout.stream, handleInput, () => {
    term.screen.invalidate();
    draw();
  });
  try {
    sampler.subscribe((sample) => {
      if (analyse(sample)) draw();
    });
    await sampler.start();
    await Promise.race([quit, term.stopped]);
  } finally {
    await sampler.stop();
    term.restore();
    source.close();
  }
  return { kind: 'ok' };
};
