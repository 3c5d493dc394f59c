/**
 * `gpumem watch`: the live terminal view. A LiveSampler reads the GPUs (or plays a recording) into its
 * ring buffer; on every sample the window of recent samples is diagnosed (core/diagnose) and the frame is
 * rendered (cli/watch/view) and drawn with line diffing (cli/watch/screen). Keys change the view state
 * (cli/watch/state); the kill key goes through the same checks as `gpumem kill`.
 */
import { userInfo } from 'node:os';
import { GpumemError, type Sample } from '../../core/index.js';
import { diagnose, type DiagnoseReport } from '../../core/diagnose/index.js';
import type { HostFacts } from '../../core/index.js';
import { detectPidNamespace, LiveSampler, readAncestors } from '../../orchestrate/index.js';
import { readLiveCompanion } from '../../store/index.js';
import type { CommandHandler } from '../context.js';
import type { WatchOptions } from '../options/gpus.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { openSource } from '../../sources/index.js';
import { testDevicePrefix } from './kill.js';
import { killFromView } from '../watch/kill-action.js';
import { orderRows } from '../watch/process-panel.js';
import { initialState, onKey, splitKeys, type WatchState } from '../watch/state.js';
import { takeTerminal } from '../watch/terminal.js';
import { renderFrame } from '../watch/view.js';

/** Samples diagnosed together for the findings line (idleness and growth need a window). */
const FINDINGS_WINDOW = 10;
/**
 * The windowed diagnosis costs about 6× a one-sample one (8 GPUs × 64 pids: ~11 ms against ~2 ms), so the
 * findings line is refreshed this often; rows and bars come from a one-sample diagnosis of every sample.
 */
const FINDINGS_EVERY_MS = 5000;
/**
 * A known process's state, parent and CPU ticks are re-read from /proc this often, spread over samples, not
 * every sample (512 stat reads were most of a sample's cost). Kill re-reads what it decides on itself.
 */
const RESTAT_EVERY_MS = 2000;
/** Parents of GPU processes change rarely: their /proc facts are re-read this often, not every sample. */
const ANCESTORS_EVERY_MS = 5000;

/** Every number of a sample the view shows, as one string: equal prints draw equal screens (ages aside). */
function fingerprint(sample: Sample): string {
  let out = '';
  for (const d of sample.devices) {
    out += `${d.index},${d.status},${d.memory.usedBytes},${d.memory.reservedBytes},${d.utilization.gpuPct},${d.temperatureC},${d.powerDrawMw};`;
  }
  for (const p of sample.processes) out += `${p.pid},${p.gpuIndex},${p.usedBytes},${p.smUtilPct},${p.host?.startTicks},${p.host?.state};`;
  return out;
}

export const run: CommandHandler<WatchOptions> = async (ctx) => {
  const o = ctx.args.options;
  if (!ctx.stdout.isTTY) {
    throw new GpumemError('USAGE', 'gpumem watch needs a terminal on stdout', { hint: 'for a log or a pipe use gpumem status --watch (or record)' });
  }
  const replay = o.replay !== undefined;
  const source = await openSource({ ...sourceOptionsFromContext(ctx), proc: { restatEveryMs: RESTAT_EVERY_MS } });
  const killOptions = { devicePrefix: replay || o.readonly ? undefined : testDevicePrefix(ctx) };
  const live = !replay;
  const info = live ? userInfo() : null;
  const viewer = info ? { uid: info.uid, user: info.username } : null;
  const pidNamespace = live ? detectPidNamespace() : 'unknown';
  const intervalFor = (speed: number): number => Math.max(10, Math.round(o.interval / speed));
  let state: WatchState = initialState(o.readonly || replay, o.speed);
  let ended = false;
  const sampler = new LiveSampler(source, {
    intervalMs: intervalFor(state.speed),
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
  let findings: DiagnoseReport['findings'] = [];
  let findingsAtMs = -Infinity;
  let latest: Sample | undefined;
  let rowPids: number[] = [];

  let lastPrint = '';
  let lastFullMs = -Infinity;
  const analyse = (sample: Sample): boolean => {
    // Skip work nobody would see: a sample whose numbers all equal the previous one's changes nothing on screen
    // but the ages, which are refreshed at least every FINDINGS_EVERY_MS.
    const print = fingerprint(sample);
    if (print === lastPrint && Date.now() - lastFullMs < FINDINGS_EVERY_MS) return false;
    lastPrint = print;
    lastFullMs = Date.now();
    latest = sample;
    if (live && Date.now() - ancestorsAtMs >= ANCESTORS_EVERY_MS) {
      ancestors = readAncestors(sample);
      ancestorsAtMs = Date.now();
    }
    const companion = live ? Object.fromEntries(readLiveCompanion(ctx.env)) : {};
    const input = { viewer, pidNamespace, ancestors, companion };
    // A replay's time is the recording's, so its findings follow the recorded clock.
    if (sample.timeMs - findingsAtMs >= FINDINGS_EVERY_MS || sample.timeMs < findingsAtMs) {
      findings = diagnose({ ...input, samples: sampler.history(FINDINGS_WINDOW) }).findings;
      findingsAtMs = sample.timeMs;
    }
    report = { ...diagnose({ ...input, samples: [sample] }), findings };
    return true;
  };

  let resolveQuit: () => void = () => {};
  const quit = new Promise<void>((resolve) => (resolveQuit = resolve));
  const draw = (): void => {
    if (!latest || !report) return;
    const rows = orderRows(report, state);
    rowPids = rows.map((r) => r.view.pid);
    if (state.selectedPid === null || !rowPids.includes(state.selectedPid)) state = { ...state, selectedPid: rowPids[0] ?? null };
    term.screen.draw(renderFrame({
      sample: latest, history: sampler.history(), report, rows, viewerUid: viewer?.uid ?? null, state,
      columns: term.columns(), height: term.rows(), color: ctx.color,
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
