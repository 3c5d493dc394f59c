/**
 * Gathers what a diagnosis needs: a window of samples (live: sampled every `intervalMs` for `windowMs`;
 * a recording: all of its samples), the /proc facts of the GPU processes' parents and of pid 1, who is
 * asking, and whether this PID namespace is the host's.
 */
import { userInfo } from 'node:os';
import type { HostFacts, Sample } from '../core/types.js';
import type { DiagnoseReport } from '../core/diagnose/engine.js';
import type { DiagnoseInput, PidNamespace } from '../core/diagnose/types.js';
import type { Fallback } from '../core/diagnose/report-json.js';
import { GpumemError, isGpumemError } from '../core/errors.js';
// Each module itself rather than the sources/ and store/ doors, which would load every source's parsers, the
// run history's SQLite and more before doctor's first screen (docs/status.md, "Start-up").
import { openSource, type OpenSourceOptions } from '../sources/open.js';
import { detectContainer, refreshHostFacts, type ProcOptions } from '../sources/procfs/index.js';
import { readLiveCompanion } from '../store/live/index.js';

export interface CollectOptions {
  /** Window length; 0 takes one sample. */
  windowMs: number;
  /** Time between live samples. */
  intervalMs: number;
  source: OpenSourceOptions;
  /**
   * Told after each live sample is read (`index` from 0 of `count`), so a command can show the first
   * sample at once instead of staying silent for the whole window. Not called for a recording.
   */
  onSample?: (sample: Sample, index: number, count: number) => void;
}

export interface Collected {
  input: DiagnoseInput;
  /** Set for a recording: its header note ("synthetic …", what was running). */
  recordingNote: string | null;
  /** Set for a recording: when it was made (its header's createdMs). */
  recordingCreatedMs: number | null;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The PID namespace verdict of the diagnosis, from the one container probe (sources/procfs). */
export function detectPidNamespace(procRoot = '/proc'): PidNamespace {
  const inContainer = detectContainer({ procRoot });
  return inContainer === true ? 'container' : inContainer === false ? 'host' : 'unknown';
}

/**
 * /proc facts of the parents of every GPU process in the latest sample, and of pid 1, where visible. Given the
 * previous answer, a parent already in it costs one stat file (host-facts.ts refreshHostFacts), and the previous
 * answer itself comes back when no parent came, went or changed.
 */
export function readAncestors(latest: Sample, proc: ProcOptions = {}, previous?: Readonly<Record<number, HostFacts>>): Record<number, HostFacts> {
  const gpuPids = new Set(latest.processes.map((p) => p.pid));
  const wanted = new Set<number>([1]);
  for (const p of latest.processes) {
    const ppid = p.host?.ppid;
    if (ppid !== null && ppid !== undefined && ppid > 0 && !gpuPids.has(ppid)) wanted.add(ppid);
  }
  const out: Record<number, HostFacts> = {};
  let same = previous !== undefined;
  let count = 0;
  for (const pid of wanted) {
    const before = previous?.[pid];
    const facts = refreshHostFacts(pid, before, proc);
    if (facts.visible && facts.cmdline) {
      out[pid] = facts;
      count++;
    }
    if (facts !== before) same = false;
  }
  return same && previous !== undefined && count === Object.keys(previous).length ? (previous as Record<number, HostFacts>) : out;
}

async function windowFromRecording(path: string): Promise<Collected> {
  const { readRecording } = await import('../sources/replay/index.js');
  const { header, samples } = readRecording(path);
  if (samples.length === 0) {
    throw new GpumemError('INPUT_MALFORMED', `${path}: the recording holds no samples`, { hint: 'record for longer with gpumem record' });
  }
  const inContainer = header.host?.inContainer;
  return {
    input: {
      samples,
      viewer: null,
      pidNamespace: inContainer === true ? 'container' : inContainer === false ? 'host' : 'unknown',
      ancestors: {},
    },
    recordingNote: header.note ?? null,
    recordingCreatedMs: header.createdMs,
  };
}

/**
 * Collects the window. With `source.replay` every sample of the recording is the window; otherwise the
 * source is sampled live (openSource throws NO_GPU_ACCESS when there is no driver at all).
 */
export async function collectWindow(options: CollectOptions): Promise<Collected> {
  if (options.source.replay !== undefined) return windowFromRecording(options.source.replay);
  const source = await openSource(options.source);
  const samples: Sample[] = [];
  try {
    // Samples at 0, interval, 2·interval … windowMs after the first, so the window spans what was asked.
    const count = Math.floor(options.windowMs / options.intervalMs) + 1;
    const started = Date.now();
    for (let k = 0; k < count; k++) {
      await sleep(Math.max(0, started + k * options.intervalMs - Date.now()));
      const sample = await source.readSample();
      samples.push(sample);
      options.onSample?.(sample, k, count);
    }
  } finally {
    source.close();
  }
  const latest = samples[samples.length - 1] as Sample;
  const info = userInfo();
  return {
    input: {
      samples,
      viewer: { uid: info.uid, user: info.username },
      pidNamespace: detectPidNamespace(options.source.proc?.procRoot),
      ancestors: readAncestors(latest, options.source.proc),
      // Read after the window so the statistics are as close as they can be to the latest sample.
      companion: Object.fromEntries(readLiveCompanion(options.source.env ?? {}, options.source.proc)),
    },
    recordingNote: null,
    recordingCreatedMs: null,
  };
}

export interface Diagnosed {
  report: DiagnoseReport;
  collected: Collected;
  /** Set when there was no GPU access and the fallback recording was diagnosed instead. */
  fallback: Fallback | null;
}

/**
 * Collects the window and diagnoses it. With `fallbackRecording`, a machine without any GPU access
 * (NO_GPU_ACCESS) gets that recording diagnosed instead, and the result says why; a replay asked for
 * explicitly never falls back.
 */
export async function diagnoseWindow(options: CollectOptions & { fallbackRecording: string | null }): Promise<Diagnosed> {
  const { fallbackRecording, ...given } = options;
  // The engine and its rules are loaded after the first sample, while the window goes on: doctor prints that
  // sample at once, and nothing it needs should wait for the rules.
  let engine: Promise<typeof import('../core/diagnose/engine.js')> | null = null;
  const loadEngine = (): Promise<typeof import('../core/diagnose/engine.js')> => (engine ??= import('../core/diagnose/engine.js'));
  const onSample = given.onSample;
  const collect: CollectOptions = {
    ...given,
    onSample: (sample, index, count) => {
      onSample?.(sample, index, count);
      if (index === 0) void loadEngine().catch(() => undefined);
    },
  };
  try {
    const collected = await collectWindow(collect);
    const { diagnose } = await loadEngine();
    return { report: diagnose(collected.input), collected, fallback: null };
  } catch (error) {
    if (fallbackRecording === null || !isGpumemError(error) || error.code !== 'NO_GPU_ACCESS' || collect.source.replay !== undefined) throw error;
    const collected = await collectWindow({ windowMs: 0, intervalMs: collect.intervalMs, source: { ...collect.source, replay: fallbackRecording } });
    const { diagnose } = await loadEngine();
    return { report: diagnose(collected.input), collected, fallback: { reason: error.message, recording: fallbackRecording } };
  }
}
