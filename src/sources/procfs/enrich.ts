/**
 * Attaching host facts to the processes of a sample. The enricher caches the facts that cannot change while
 * a process lives (command line, environment, cgroup, start time), keyed by pid and start ticks, so a watch
 * loop re-reads only /proc/PID/stat per process, through a descriptor held open between samples.
 */
import type { GpuProcess, HostFacts, Sample } from '../../core/types.js';
import { NOT_HERE, invisibleFacts, openRssHandle, readStableFacts, readHostFacts, type ProcOptions } from './host-facts.js';
import type { ProcStat } from './parse.js';
import { openStatHandle, readProcStat, type ProcFileHandle, type StatHandle } from './stat.js';

/** Returns `sample` with `host` filled on every process (rows are never dropped). */
export interface HostEnricher {
  (sample: Sample): Sample;
  /** Releases the /proc descriptors held between samples; the enricher keeps working (re-opening). */
  close(): void;
}

/**
 * At most this many /proc/PID/stat and statm descriptors stay open between samples (512 GPU processes need
 * 512, plus one statm per row on screen); beyond it a pid is read by path each sample, so the enricher never
 * exhausts the descriptor limit.
 */
const MAX_HELD_STATS = 2048;

interface Known {
  startTicks: number;
  facts: HostFacts;
  stat: StatHandle | null;
  /** /proc/PID/statm, opened the first time the pid is in focus (liveUsage). */
  rss: ProcFileHandle<number> | null;
  /** When /proc/PID/stat was last read for the restat schedule (only kept with `restatEveryMs`). */
  readAtMs: number;
  /** When the `cpuTicks` in `facts` were read: the base of the next CPU %. */
  statAtMs: number;
}

type RssHolder = Pick<Known, 'rss'>;

/** Two GPU rows as a source gave them (before host facts) equal in every field. */
function sameGpuRow(a: GpuProcess, b: GpuProcess): boolean {
  if (a.pid !== b.pid || a.gpuUuid !== b.gpuUuid || a.gpuIndex !== b.gpuIndex || a.gpuInstanceId !== b.gpuInstanceId
    || a.computeInstanceId !== b.computeInstanceId || a.usedBytes !== b.usedBytes || a.kind !== b.kind || a.name !== b.name
    || a.smUtilPct !== b.smUtilPct) return false;
  const keys = Object.keys(b.unavailable);
  if (keys.length !== Object.keys(a.unavailable).length) return false;
  for (const k of keys) if (a.unavailable[k] !== b.unavailable[k]) return false;
  return true;
}

/** CPU % of one core between two readings of a process's ticks, to 0.1; null when either is unknown. */
function cpuPctBetween(ticksBefore: number | null | undefined, ticksNow: number | null, elapsedMs: number, ticksPerSec: number): number | null {
  if (ticksBefore === null || ticksBefore === undefined || ticksNow === null || !(elapsedMs > 0) || ticksNow < ticksBefore) return null;
  return Math.round(((ticksNow - ticksBefore) / ticksPerSec / (elapsedMs / 1000)) * 1000) / 10;
}

/**
 * Makes an enricher that remembers stable facts per (pid, start ticks) and keeps each process's
 * /proc/PID/stat open, so a sample costs one read per process: a pid reused by a new process has other start
 * ticks (and its old descriptor fails) and is read afresh. Facts whose state, parent, CPU ticks and RSS did
 * not change are returned as the same object, without copying. With `liveUsage`, each re-read also gives the
 * CPU % since the previous one and the resident set size.
 */
export function createHostEnricher(options: ProcOptions = {}): HostEnricher {
  const cache = new Map<number, Known>();
  let held = 0;
  const restatMs = options.restatEveryMs ?? 0;
  const focusMs = options.focusRestatEveryMs ?? restatMs;
  const ticksPerSec = options.clockTicksPerSec ?? 100;
  const live = options.liveUsage === true;
  const reuseRows = options.reuseRows === true;
  const now = options.nowMs ?? Date.now;
  let sampleAtMs = 0;
  let focus: ReadonlySet<number> | null = null;
  // Reused between samples: one /proc read per pid per sample (a pid on eight GPUs is eight rows, one process).
  const seen = new Map<number, HostFacts>();
  const forget = (pid: number): void => {
    const known = cache.get(pid);
    if (known?.stat) {
      known.stat.close();
      held--;
    }
    if (known?.rss) {
      known.rss.close();
      held--;
    }
    cache.delete(pid);
  };

  let previousIn: readonly GpuProcess[] = [];
  let previousOut: readonly GpuProcess[] = [];
  const enrich = (sample: Sample): Sample => {
    seen.clear();
    sampleAtMs = now();
    focus = options.focusPids?.() ?? null;
    const processes = sample.processes.map((p, i) => {
      let host = seen.get(p.pid);
      if (!host) {
        host = factsFor(p.pid);
        seen.set(p.pid, host);
      }
      // A row equal to the previous sample's keeps that sample's object: a ring buffer of ten minutes of
      // samples then holds one object per change instead of one per row per sample (and the GC walks less).
      const before = previousOut[i];
      if (reuseRows && before !== undefined && before.host === host && sameGpuRow(previousIn[i] as GpuProcess, p)) return before;
      return { ...p, host };
    });
    for (const pid of cache.keys()) if (!seen.has(pid)) forget(pid);
    if (reuseRows) [previousIn, previousOut] = [sample.processes, processes];
    return { ...sample, processes };
  };

  function factsFor(pid: number): HostFacts {
    const known = cache.get(pid);
    // Reading 512 stat files costs several ms a sample; a live view refreshes a known process's state slowly,
    // and the rows on screen (the focus) faster.
    const periodMs = focus?.has(pid) ? focusMs : restatMs;
    if (known && periodMs > 0 && sampleAtMs - known.readAtMs < periodMs) return known.facts;
    if (known) known.readAtMs = sampleAtMs;
    let stat: ProcStat | null = known?.stat ? known.stat.read() : null;
    if (known && stat && stat.startTicks === known.startTicks && stat.state !== 'Z') {
      const f = known.facts;
      const cpuPct = live ? cpuPctBetween(f.cpuTicks, stat.cpuTicks, sampleAtMs - known.statAtMs, ticksPerSec) : null;
      // statm is a second read per pid: only for the rows someone looks at.
      const rssBytes = live && (focus === null || focus.has(pid)) ? readRss(known, pid) : (f.rssBytes ?? null);
      known.statAtMs = sampleAtMs;
      if (stat.state !== f.state || stat.ppid !== f.ppid || stat.cpuTicks !== f.cpuTicks || (live && (rssBytes !== f.rssBytes || cpuPct !== f.cpuPct))) {
        known.facts = { ...f, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...(live ? { cpuPct, rssBytes } : {}) };
      }
      return known.facts;
    }
    forget(pid);
    let handle: StatHandle | null = null;
    if (held < MAX_HELD_STATS) {
      try {
        handle = openStatHandle(pid, options);
      } catch {
        // Gone, hidden or not ours to read: readHostFacts says which, with every fact null and the reason.
        return readHostFacts(pid, options);
      }
    }
    stat = handle ? handle.read() : readProcStat(pid, options);
    if (!stat) {
      handle?.close();
      return readHostFacts(pid, options);
    }
    const holder: RssHolder = { rss: null };
    const usage = live ? { cpuPct: null, rssBytes: focus === null || focus.has(pid) ? readRss(holder, pid) : null } : {};
    const facts: HostFacts = { visible: true, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...usage, ...readStableFacts(pid, stat, options) };
    // A zombie is read afresh every sample (its facts are being released); there is nothing to hold for it.
    if (handle && stat.state === 'Z') {
      handle.close();
      handle = null;
    }
    if (handle) held++;
    // Spread by pid so that a view of 512 processes re-reads a few each sample, not all at once; the first
    // re-read comes between half a period and one period after this read.
    const readAtMs = restatMs > 0 ? sampleAtMs - (pid % Math.max(1, Math.floor(restatMs / 2))) : 0;
    // A pid without a held stat is read afresh next time: nothing else is held for it either.
    if (!handle && holder.rss) {
      holder.rss.close();
      holder.rss = null;
      held--;
    }
    cache.set(pid, { startTicks: stat.startTicks, facts, stat: handle, rss: holder.rss, readAtMs, statAtMs: sampleAtMs });
    return facts;
  }

  /** The RSS of a known pid through its held statm (opened on first use, within the descriptor budget). */
  function readRss(known: RssHolder, pid: number): number | null {
    if (!known.rss && held < MAX_HELD_STATS) {
      try {
        known.rss = openRssHandle(pid, options);
        held++;
      } catch {
        return null;
      }
    }
    const bytes = known.rss?.read() ?? null;
    if (bytes === null && known.rss) {
      known.rss.close();
      known.rss = null;
      held--;
    }
    return bytes;
  }

  return Object.assign(enrich, {
    close(): void {
      for (const pid of [...cache.keys()]) forget(pid);
    },
  });
}

/** Fills `host` on every process of one sample from /proc, without caching. */
export function enrichSample(sample: Sample, options: ProcOptions = {}): Sample {
  const enrich = createHostEnricher(options);
  try {
    return enrich(sample);
  } finally {
    enrich.close();
  }
}

export { NOT_HERE, invisibleFacts };
