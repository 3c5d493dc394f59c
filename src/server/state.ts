/**
 * The server's view of the machine: the shared live sampler plus what changes more slowly (PyTorch numbers
 * from running supervisors, the diagnosis, the run history), each cached for a short time so a burst of
 * requests costs one read. Nothing here grows with uptime: samples live in the sampler's ring buffer.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostname as osHostname, userInfo } from 'node:os';
import { diagnose, type DiagnoseReport } from '../core/diagnose/engine.js';
import type { Sample } from '../core/types.js';
import { detectPidNamespace, readAncestors, RingBuffer, type LiveSampler } from '../orchestrate/index.js';
import { liveRow, type LiveRow } from './live-row.js';
import type { ProcOptions } from '../sources/index.js';
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
  /** How long the history summary is reused (default 5000 ms). */
  cacheMs?: number;
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

  /** The value however old, or undefined before the first computation. */
  peek(): T | undefined {
    return this.value;
  }

  /** True when get() would compute. */
  stale(key: unknown): boolean {
    return this.value === undefined || this.now() - this.atMs >= this.maxAgeMs || this.key !== key;
  }

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
  private readonly diagnosisCache: Cached<DiagnoseReport>;
  private readonly runsCache: Cached<RunSummary | null>;
  private readonly live: RingBuffer<LiveRow>;
  private diagnosisPending = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: ServerStateOptions) {
    this.hostname = options.hostname ?? osHostname();
    this.now = options.now ?? Date.now;
    this.cacheMs = options.cacheMs ?? 5000;
    this.companionCache = new Cached(1000, this.now);
    this.diagnosisCache = new Cached(options.diagnosisMs ?? 15_000, this.now);
    this.runsCache = new Cached(this.cacheMs, this.now);
    this.live = new RingBuffer<LiveRow>(options.liveCapacity ?? 300);
    for (const sample of options.sampler.history()) this.live.push(liveRow(sample));
    this.unsubscribe = options.sampler.subscribe((sample) => this.live.push(liveRow(sample)));
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
    return { sample, hostname: this.hostname, companion: this.companion(), findings: this.diagnosis()?.findings ?? [], runs: this.runs() };
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
    if (this.diagnosisCache.stale(null) && !this.diagnosisPending) {
      this.diagnosisPending = true;
      setImmediate(() => {
        this.diagnosisPending = false;
        this.diagnosis();
      });
    }
    return this.diagnosisCache.peek();
  }

  /** `gpumem diagnose` over the newest samples (reused for `diagnosisMs`, default 15 s: findings change slowly). */
  diagnosis(): DiagnoseReport | undefined {
    const samples = this.options.sampler.history(this.options.windowSamples ?? 6);
    const latest = samples[samples.length - 1];
    if (!latest) return undefined;
    return this.diagnosisCache.get(null, () => {
      const live = latest.source.kind !== 'replay';
      const info = userInfo();
      return diagnose({
        samples,
        viewer: live ? { uid: info.uid, user: info.username } : null,
        pidNamespace: live ? detectPidNamespace(this.options.proc?.procRoot) : 'unknown',
        ancestors: live ? readAncestors(latest, this.options.proc) : {},
        companion: Object.fromEntries(this.companion().map((c) => [c.pid, c])),
      });
    });
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
