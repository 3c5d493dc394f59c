/**
 * Attaching host facts to the processes of a sample. The enricher caches the facts that cannot change while
 * a process lives (command line, environment, cgroup, start time), keyed by pid and start ticks, so a watch
 * loop re-reads only /proc/PID/stat per process, through a descriptor held open between samples.
 */
import type { GpuProcess, HostFacts, Sample } from '../../core/types.js';
import { heldFilesBudget } from './fd-budget.js';
import { NOT_HERE, invisibleFacts, openRssHandle, readStableFacts, readHostFacts, type ProcOptions } from './host-facts.js';
import type { ProcStat } from './parse.js';
import { openStatHandle, readProcStat, type ProcFileHandle, type StatHandle } from './stat.js';

/** Returns `sample` with `host` filled on every process (rows are never dropped). */
export interface HostEnricher {
  (sample: Sample): Sample;
  /** Releases the /proc descriptors held between samples; the enricher keeps working (re-opening). */
  close(): void;
  /** What the enricher has done so far: stable facts read (status, cmdline, exe, cgroup, environ), files held now. */
  readonly counts: { stableFactReads: number; heldFiles: number };
}


interface Known {
  startTicks: number;
  facts: HostFacts;
  stat: StatHandle | null;
  /** /proc/PID/statm, opened the first time the pid is in focus (liveUsage). */
  rss: ProcFileHandle<number> | null;
  /** Whether the pid has been read while in focus (a row new on screen is read at once, not at the next round). */
  focusRead: boolean;
  /** When the `cpuTicks` in `facts` were read: the base of the next CPU %. */
  statAtMs: number;
  /** The sample that last had this pid (pids of other samples are forgotten). */
  seenIn: number;
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

/**
 * `p` with its host facts: a new row, never a mutation. Every field is named (the order the sources write
 * them in) rather than spread: a literal of one shape costs a fraction of a generic copy, once per row per sample.
 */
function withHost(p: GpuProcess, host: HostFacts): GpuProcess {
  return { pid: p.pid, gpuUuid: p.gpuUuid, gpuIndex: p.gpuIndex, gpuInstanceId: p.gpuInstanceId, computeInstanceId: p.computeInstanceId,
    usedBytes: p.usedBytes, kind: p.kind, name: p.name, smUtilPct: p.smUtilPct, host, unavailable: p.unavailable };
}

/** CPU % of one core between two readings of a process's ticks, to 0.1; null when either is unknown. */
function cpuPctBetween(ticksBefore: number | null | undefined, ticksNow: number | null, elapsedMs: number, ticksPerSec: number): number | null {
  if (ticksBefore === null || ticksBefore === undefined || ticksNow === null || !(elapsedMs > 0) || ticksNow < ticksBefore) return null;
  return Math.round(((ticksNow - ticksBefore) / ticksPerSec / (elapsedMs / 1000)) * 1000) / 10;
}

/**
 * Makes an enricher that remembers stable facts per (pid, start ticks) and keeps each process's
 * /proc/PID/stat open, so a sample costs one read per process: a pid reused by a new process has other start
 * ticks (and its old descriptor fails) and is read afresh. Between re-reads (restatEveryMs) the same facts
 * object is returned; without restatEveryMs, facts whose state, parent, CPU ticks and RSS did not change are
 * too. With `liveUsage`, each re-read also gives the CPU % since the previous one and the resident set size.
 */
export function createHostEnricher(options: ProcOptions = {}): HostEnricher {
  const cache = new Map<number, Known>();
  let held = 0;
  let stableFactReads = 0;
  // /proc/PID/stat and statm descriptors kept open between samples (one stat per GPU process, one statm per
  // row on screen). Past the budget a pid's stat is read by path each sample; its stable facts stay cached.
  const maxHeld = options.maxHeldFiles ?? heldFilesBudget();
  const period = options.restatEveryMs;
  const periodNow = (): number => (typeof period === 'function' ? Math.max(1, period()) : (period ?? 0));
  // Asked again at each sample (a function may answer differently); 0 only when no period was given at all.
  let restatMs = periodNow();
  let focusMs = options.focusRestatEveryMs ?? restatMs;
  const ticksPerSec = options.clockTicksPerSec ?? 100;
  const live = options.liveUsage === true;
  const reuseRows = options.reuseRows === true;
  const now = options.nowMs ?? Date.now;
  let sampleAtMs = 0;
  let sampleNumber = 0;
  /** Cached pids met so far in this sample: when it equals the cache's size, no cached pid left the sample. */
  let seenCount = 0;
  let focus: ReadonlySet<number> | null = null;
  // Known pids are re-read in rounds, all due ones in the same sample: a burst of reads costs a fraction of
  // the same reads spread over samples, each of which would find the kernel's and our code cold.
  const rounds = { offAtMs: -Infinity, focusAtMs: -Infinity, off: true, focus: true };
  // Facts of pids that could not be cached (gone, hidden), for the other rows of the same pid in this sample.
  const uncached = new Map<number, HostFacts>();
  // Pids /proc does not show (NVML lists the host's pids, which a container cannot see): looked for again at
  // the next round of re-reads, not every sample, which would try every file of each every second. With no
  // rounds (restatMs 0) every sample looks. A pid that exits and is reused within a round by a process that
  // holds a GPU shows as not visible until that round.
  const hidden = new Map<number, HostFacts>();
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
  const dated = (): { cpuTicksAtMs?: number } => (restatMs > 0 ? { cpuTicksAtMs: sampleAtMs } : {});
  const roundDue = (periodMs: number, lastMs: number): boolean => periodMs <= 0 || sampleAtMs - lastMs >= periodMs || sampleAtMs < lastMs;

  /** Whether a known pid's stat is re-read in this sample (its round is due, or it is newly in focus). */
  const dueNow = (known: Known, inFocus: boolean): boolean => (inFocus ? rounds.focus || (live && !known.focusRead) : rounds.off);
  const prefetchDue = (known: Known, pid: number): void => {
    if (known.stat !== null && dueNow(known, focus?.has(pid) === true)) known.stat.prefetch(sampleNumber);
  };

  const forgetUnseen = (known: Known, pid: number): void => {
    if (known.seenIn !== sampleNumber) forget(pid);
  };

  // Rows are written here while every one so far equals the previous sample's; it is only read, never kept.
  const scratch: GpuProcess[] = [];
  let previousIn: readonly GpuProcess[] = [];
  let previousOut: readonly GpuProcess[] = [];
  let previousFocus: ReadonlySet<number> | null = null;
  /** Whether the previous sample had a pid whose facts are read afresh every sample (not cached, not hidden). */
  let rereadEach = false;
  const enrich = (sample: Sample): Sample => {
    sampleNumber++;
    seenCount = 0;
    sampleAtMs = now();
    focus = options.focusPids?.() ?? null;
    if (typeof period === 'function') {
      restatMs = periodNow();
      focusMs = options.focusRestatEveryMs ?? restatMs;
    }
    rounds.off = roundDue(restatMs, rounds.offAtMs);
    rounds.focus = roundDue(focusMs, rounds.focusAtMs);
    if (rounds.off) rounds.offAtMs = sampleAtMs;
    if (rounds.focus) rounds.focusAtMs = sampleAtMs;
    // The very rows of the previous sample, no round due, the same focus, and no pid read afresh every sample
    // (a zombie, a pid gone since): every row would come out as before, so the previous output is it.
    if (reuseRows && sample.processes === previousIn && !rounds.off && !rounds.focus && focus === previousFocus && !rereadEach) {
      return { ...sample, processes: previousOut as GpuProcess[] };
    }
    previousFocus = focus;
    rereadEach = false;
    if (uncached.size > 0) uncached.clear();
    if (rounds.off && hidden.size > 0) hidden.clear();
    // Every held stat due in this sample is read first, all together, and parsed as its row comes.
    if (rounds.off || rounds.focus) cache.forEach(prefetchDue);
    let allSame = reuseRows && sample.processes.length === previousOut.length;
    const rows = sample.processes;
    const processes = allSame ? scratch : new Array<GpuProcess>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const p = rows[i] as GpuProcess;
      const host = factsOnce(p.pid);
      // A row equal to the previous sample's keeps that sample's object: a ring buffer of ten minutes of
      // samples then holds one object per change instead of one per row per sample (and the GC walks less).
      const before = previousOut[i];
      if (reuseRows && before !== undefined && before.host === host && (previousIn[i] === p || sameGpuRow(previousIn[i] as GpuProcess, p))) processes[i] = before;
      else {
        allSame = false;
        processes[i] = withHost(p, host);
      }
    }
    // Only when some cached pid was not in this sample; forEach, not for…of over entries: no [pid, known]
    // pair made per pid.
    if (seenCount !== cache.size) cache.forEach(forgetUnseen);
    if (!reuseRows) return { ...sample, processes };
    // Every row as before: the previous array itself, so unchanged samples share one. Otherwise the rows were
    // written into the scratch array, which becomes this sample's (a fresh scratch is made for the next one).
    const out = allSame ? previousOut : processes === scratch ? scratch.slice(0, rows.length) : processes;
    [previousIn, previousOut] = [sample.processes, out];
    return { ...sample, processes: out as GpuProcess[] };
  };

  /** The facts of `pid` for this sample, read at most once per sample (a pid on eight GPUs is eight rows). */
  function factsOnce(pid: number): HostFacts {
    const known = cache.get(pid);
    if (known?.seenIn === sampleNumber) return known.facts;
    const have = uncached.size > 0 ? uncached.get(pid) : undefined;
    if (have) return have;
    const stillHidden = known === undefined && hidden.size > 0 ? hidden.get(pid) : undefined;
    if (stillHidden) {
      uncached.set(pid, stillHidden);
      return stillHidden;
    }
    const facts = factsFor(pid, known);
    // A known pid still itself was marked seen by factsFor; otherwise one more lookup says whether it was cached.
    if (known?.seenIn === sampleNumber) seenCount++;
    else {
      const cached = cache.get(pid);
      if (cached) {
        cached.seenIn = sampleNumber;
        seenCount++;
      } else {
        uncached.set(pid, facts);
        if (!facts.visible && restatMs > 0) hidden.set(pid, facts);
        else rereadEach = true;
      }
    }
    return facts;
  }

  function factsFor(pid: number, known: Known | undefined): HostFacts {
    // Reading 512 stat files costs several ms a sample; a live view re-reads known processes in slow rounds,
    // and the rows on screen (the focus) in faster ones.
    const inFocus = focus?.has(pid) === true;
    if (known && !dueNow(known, inFocus)) {
      known.seenIn = sampleNumber;
      return known.facts;
    }
    let stat: ProcStat | null = known ? readKnownStat(known, pid) : null;
    if (known && stat && stat.startTicks === known.startTicks && stat.state !== 'Z') {
      const f = known.facts;
      const cpuPct = live ? cpuPctBetween(f.cpuTicks, stat.cpuTicks, sampleAtMs - known.statAtMs, ticksPerSec) : null;
      // statm is a second read per pid: only for the rows someone looks at.
      const rssBytes = live && (focus === null || inFocus) ? readRss(known, pid) : (f.rssBytes ?? null);
      known.statAtMs = sampleAtMs;
      known.seenIn = sampleNumber;
      known.focusRead ||= inFocus;
      // With slow re-reads each one is dated (a new object), so a window can tell one reading from two.
      if (restatMs > 0 || stat.state !== f.state || stat.ppid !== f.ppid || stat.cpuTicks !== f.cpuTicks || (live && (rssBytes !== f.rssBytes || cpuPct !== f.cpuPct))) {
        known.facts = { ...f, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...dated(), ...(live ? { cpuPct, rssBytes } : {}) };
      }
      return known.facts;
    }
    forget(pid);
    let handle: StatHandle | null = null;
    if (held < maxHeld) {
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
    const usage = live ? { cpuPct: null, rssBytes: focus === null || inFocus ? readRss(holder, pid) : null } : {};
    stableFactReads++;
    const facts: HostFacts = { visible: true, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...dated(), ...usage, ...readStableFacts(pid, stat, options) };
    // A zombie is read afresh every sample (its facts are being released); there is nothing to hold for it.
    if (handle && stat.state === 'Z') {
      handle.close();
      handle = null;
    }
    if (handle) held++;
    // A pid without a held stat holds nothing else either (its stable facts are cached all the same).
    if (!handle && holder.rss) {
      holder.rss.close();
      holder.rss = null;
      held--;
    }
    cache.set(pid, { startTicks: stat.startTicks, facts, stat: handle, rss: holder.rss, focusRead: inFocus, statAtMs: sampleAtMs, seenIn: sampleNumber });
    return facts;
  }

  /**
   * The stat of a known pid: through its held descriptor, else (past the budget when it was first seen)
   * through one opened now if there is room, else by path. Null when it cannot be read.
   */
  function readKnownStat(known: Known, pid: number): ProcStat | null {
    if (known.stat) return known.stat.read(sampleNumber);
    if (held < maxHeld) {
      try {
        known.stat = openStatHandle(pid, options);
        held++;
        return known.stat.read();
      } catch {
        return null;
      }
    }
    return readProcStat(pid, options);
  }

  /** The RSS of a known pid through its held statm (opened on first use, within the descriptor budget). */
  function readRss(known: RssHolder, pid: number): number | null {
    if (!known.rss && held < maxHeld) {
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

  const enricher = Object.assign(enrich, {
    close(): void {
      for (const pid of [...cache.keys()]) forget(pid);
    },
  });
  // A getter (Object.assign would copy the counts once).
  return Object.defineProperty(enricher, 'counts', { get: () => ({ stableFactReads, heldFiles: held }) }) as HostEnricher;
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
