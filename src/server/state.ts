/**
 * The server's view of the machine: the shared live sampler plus what changes more slowly (PyTorch numbers
 * from running supervisors, the diagnosis, the run history), each cached for a short time so a burst of
 * requests costs one read. Nothing here grows with uptime: samples live in the sampler's ring buffer.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostname as osHostname, userInfo } from 'node:os';
import { diagnose, type DiagnoseReport } from '../core/diagnose/engine.js';
import type { Finding } from '../core/diagnose/types.js';
import type { HostFacts, Sample } from '../core/types.js';
import { detectPidNamespace, readAncestors, RingBuffer, type LiveSampler } from '../orchestrate/index.js';
import { liveRow, type LiveRow } from './live-row.js';
import { sameReadings } from './sample-change.js';
import { parseRunMark, readBootTimeMs, readProcStat, type ProcOptions } from '../sources/index.js';
import { historySummary, listRuns, openHistory, readLiveCompanion, type Db, type LiveCompanionEntry } from '../store/index.js';
import type { RunSummary, ServerSnapshot } from './snapshot.js';

export interface ServerStateOptions {
  sampler: LiveSampler;
  env: Readonly<Record<string, string | undefined>>;
  /** The run history; null: none (runs are not shown). */
  dbPath: string | null;
  /** Samples in a diagnosis window (default 6: with a 500 ms interval, 3 s like `gpumem diagnose`). */
  windowSamples?: number;
  /** Chart points kept (default 300); full samples are kept only as long as the diagnosis window needs. */
  liveCapacity?: number;
  /** How long a diagnosis is reused (default 15 000 ms). */
  diagnosisMs?: number;
  /**
   * How long it is reused while no GPU reading, process or PyTorch number changed since it was made (default
   * 60 000 ms, never less than `diagnosisMs`): only the ages in its text move meanwhile.
   */
  diagnosisUnchangedMs?: number;
  /** How long the history summary is reused (default 5000 ms). */
  cacheMs?: number;
  /** The host label's value on /metrics (default: NODE_NAME, as dcgm-exporter reads it, else the machine's name). */
  hostname?: string;
  proc?: ProcOptions;
  now?: () => number;
}

/** One value reused for `maxAgeMs`, and only while its key (e.g. the newest sample's time) is the same. */
class Cached<T> {
  private atMs = -Infinity;
  private key: unknown = undefined;
  private value: T | undefined;

  constructor(private readonly maxAgeMs: number, private readonly now: () => number) {}

  get(key: unknown, compute: () => T): T {
    const nowMs = this.now();
    if (this.value !== undefined && nowMs - this.atMs < this.maxAgeMs && this.key === key) return this.value;
    this.value = compute();
    this.atMs = nowMs;
    this.key = key;
    return this.value;
  }
}

export class ServerState {
  readonly hostname: string;
  private readonly now: () => number;
  private readonly cacheMs: number;
  private db: Db | null = null;
  private readonly companionCache: Cached<LiveCompanionEntry[]>;
  private readonly diagnosisMs: number;
  private readonly diagnosisUnchangedMs: number;
  private report: { value: DiagnoseReport; atMs: number; readings: number; companion: string } | null = null;
  /** The launchers' facts last read: a launcher read again costs one stat file while it lives (readAncestors). */
  private ancestors: Record<number, HostFacts> | undefined;
  /** Counts samples whose readings differ from the sample before (sameReadings). */
  private readings = 0;
  private previous: Sample | undefined;
  private readonly runsCache: Cached<RunSummary | null>;
  private readonly live: RingBuffer<LiveRow>;
  private diagnosisPending = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: ServerStateOptions) {
    this.hostname = options.hostname ?? (options.env.NODE_NAME || osHostname());
    this.now = options.now ?? Date.now;
    this.cacheMs = options.cacheMs ?? 5000;
    this.companionCache = new Cached(1000, this.now);
    this.diagnosisMs = options.diagnosisMs ?? 15_000;
    this.diagnosisUnchangedMs = Math.max(this.diagnosisMs, options.diagnosisUnchangedMs ?? 60_000);
    this.runsCache = new Cached(this.cacheMs, this.now);
    this.live = new RingBuffer<LiveRow>(options.liveCapacity ?? 300);
    for (const sample of options.sampler.history()) this.onSample(sample);
    this.unsubscribe = options.sampler.subscribe((sample) => this.onSample(sample));
  }

  private onSample(sample: Sample): void {
    this.live.push(liveRow(sample));
    if (!this.previous || !sameReadings(this.previous, sample)) this.readings++;
    this.previous = sample;
  }

  get sampler(): LiveSampler {
    return this.options.sampler;
  }

  latest(): Sample | undefined {
    return this.options.sampler.latest();
  }

  /** The newest `last` chart points, oldest first. */
  liveRows(last?: number): LiveRow[] {
    return this.live.toArray(last);
  }

  /** Everything /metrics and the page show, or undefined before the first sample. */
  snapshot(): ServerSnapshot | undefined {
    const sample = this.latest();
    if (!sample) return undefined;
    const findings = this.diagnosis()?.findings ?? [];
    return { sample, hostname: this.hostname, companion: this.companion(), findings, runs: this.runs(), jobEnded: this.jobEnded(sample, findings) };
  }

  /**
   * The pids of the sample whose job has ended: named by the diagnosis's `orphans` finding (launcher gone,
   * idle), or marked by a `gpumem run` whose supervisor is no longer alive. A replayed sample says nothing
   * about this machine's processes, so only its findings count.
   */
  private jobEnded(sample: Sample, findings: readonly Finding[]): Set<number> {
    const ended = new Set<number>();
    for (const f of findings) if (f.id === 'orphans') for (const pid of f.evidence.pids) ended.add(pid);
    if (sample.source.kind === 'replay') return ended;
    const over = new Map<string, boolean>();
    for (const p of sample.processes) {
      const mark = p.host?.job?.runMark;
      if (typeof mark !== 'string') continue;
      if (!over.has(mark)) over.set(mark, this.runOver(mark));
      if (over.get(mark)) ended.add(p.pid);
    }
    return ended;
  }

  /**
   * Whether the supervisor a run mark names is gone: no such pid, or a process started after the run began
   * (the pid was reused). /proc/stat's boot time has whole seconds, so a start up to 2 s after counts as the same.
   */
  private runOver(mark: string): boolean {
    const run = parseRunMark(mark);
    if (!run) return false;
    const stat = readProcStat(run.supervisorPid, this.options.proc);
    if (!stat) return true;
    const bootMs = readBootTimeMs(this.options.proc);
    if (bootMs === null) return false;
    const startMs = bootMs + (stat.startTicks * 1000) / (this.options.proc?.clockTicksPerSec ?? 100);
    return startMs > run.startedAtMs + 2000;
  }

  /** PyTorch statistics published by running `gpumem run` supervisors (re-read at most once a second). */
  companion(): LiveCompanionEntry[] {
    return this.companionCache.get(null, () => [...readLiveCompanion(this.options.env, this.options.proc).values()]);
  }

  /**
   * The last diagnosis without waiting: a stale one is recomputed right after the caller is done, so a
   * page's update is never held up by it. Undefined until the first diagnosis is in.
   */
  diagnosisSoon(): DiagnoseReport | undefined {
    if (this.diagnosisStale() && !this.diagnosisPending) {
      this.diagnosisPending = true;
      setImmediate(() => {
        this.diagnosisPending = false;
        this.diagnosis();
      });
    }
    return this.report?.value;
  }

  /** The /proc facts of the sample's GPU processes' parents (launchers); none for a recording. */
  ancestorsOf(sample: Sample): Record<number, HostFacts> {
    if (sample.source.kind === 'replay') return {};
    this.ancestors = readAncestors(sample, this.options.proc, this.ancestors);
    return this.ancestors;
  }

  /**
   * `gpumem diagnose` over the newest samples, reused for `diagnosisMs` (default 15 s: findings change
   * slowly), and for `diagnosisUnchangedMs` (60 s) while nothing it reads changed.
   */
  diagnosis(): DiagnoseReport | undefined {
    const samples = this.options.sampler.history(this.options.windowSamples ?? 6);
    const latest = samples[samples.length - 1];
    if (!latest) return undefined;
    if (this.report && !this.diagnosisStale()) return this.report.value;
    const companion = this.companion();
    const live = latest.source.kind !== 'replay';
    const info = userInfo();
    const value = diagnose({
      samples,
      viewer: live ? { uid: info.uid, user: info.username } : null,
      pidNamespace: live ? detectPidNamespace(this.options.proc?.procRoot) : 'unknown',
      ancestors: live ? this.ancestorsOf(latest) : {},
      companion: Object.fromEntries(companion.map((c) => [c.pid, c])),
    });
    this.report = { value, atMs: this.now(), readings: this.readings, companion: JSON.stringify(companion) };
    return value;
  }

  private diagnosisStale(): boolean {
    if (!this.report) return true;
    const ageMs = this.now() - this.report.atMs;
    if (ageMs >= this.diagnosisUnchangedMs) return true;
    if (ageMs < this.diagnosisMs) return false;
    return this.report.readings !== this.readings || this.report.companion !== JSON.stringify(this.companion());
  }

  /** The history's summary; null when there is no history file. */
  runs(): RunSummary | null {
    return this.runsCache.get(null, () => {
      const db = this.history();
      if (!db) return null;
      return { ...historySummary(db), recent: listRuns(db, 20) };
    });
  }

  /** The open history database, opened when its file exists (never created by the server). */
  history(): Db | null {
    if (this.db) return this.db;
    const path = this.options.dbPath;
    if (path === null || !existsSync(path)) return null;
    this.db = openHistory(path);
    return this.db;
  }

  /** The folder holding run folders (`<history dir>/runs`); null without a history. */
  runsFolder(): string | null {
    return this.options.dbPath === null ? null : join(dirname(this.options.dbPath), 'runs');
  }

  close(): void {
    this.unsubscribe();
    this.db?.close();
    this.db = null;
  }
}
