/**
 * Attaching host facts to the processes of a sample. The enricher caches the facts that cannot change while
 * a process lives (command line, environment, cgroup, start time), keyed by pid and start ticks, so a watch
 * loop re-reads only /proc/PID/stat per process, through a descriptor held open between samples.
 */
import type { HostFacts, Sample } from '../../core/types.js';
import { NOT_HERE, invisibleFacts, readStableFacts, readHostFacts, type ProcOptions } from './host-facts.js';
import type { ProcStat } from './parse.js';
import { openStatHandle, readProcStat, type StatHandle } from './stat.js';

/** Returns `sample` with `host` filled on every process (rows are never dropped). */
export interface HostEnricher {
  (sample: Sample): Sample;
  /** Releases the /proc descriptors held between samples; the enricher keeps working (re-opening). */
  close(): void;
}

/**
 * At most this many /proc/PID/stat descriptors stay open between samples (512 GPU processes need 512);
 * beyond it a pid is read by path each sample, so the enricher never exhausts the descriptor limit.
 */
const MAX_HELD_STATS = 2048;

interface Known {
  startTicks: number;
  facts: HostFacts;
  stat: StatHandle | null;
  /** When /proc/PID/stat was last read (only kept with `restatEveryMs`). */
  readAtMs: number;
}

/**
 * Makes an enricher that remembers stable facts per (pid, start ticks) and keeps each process's
 * /proc/PID/stat open, so a sample costs one read per process: a pid reused by a new process has other start
 * ticks (and its old descriptor fails) and is read afresh. Facts whose state and parent did not change are
 * returned as the same object, without copying.
 */
export function createHostEnricher(options: ProcOptions = {}): HostEnricher {
  const cache = new Map<number, Known>();
  let held = 0;
  const restatMs = options.restatEveryMs ?? 0;
  const now = options.nowMs ?? Date.now;
  let sampleAtMs = 0;
  const forget = (pid: number): void => {
    const known = cache.get(pid);
    if (known?.stat) {
      known.stat.close();
      held--;
    }
    cache.delete(pid);
  };

  const enrich = (sample: Sample): Sample => {
    // One /proc read per pid per sample: a pid on eight GPUs is eight rows but one process.
    const seen = new Map<number, HostFacts>();
    if (restatMs > 0) sampleAtMs = now();
    const processes = sample.processes.map((p) => {
      let host = seen.get(p.pid);
      if (!host) {
        host = factsFor(p.pid);
        seen.set(p.pid, host);
      }
      return { ...p, host };
    });
    for (const pid of cache.keys()) if (!seen.has(pid)) forget(pid);
    return { ...sample, processes };
  };

  function factsFor(pid: number): HostFacts {
    const known = cache.get(pid);
    // Reading 512 stat files costs several ms a sample; a live view refreshes a known process's state slowly.
    if (known && restatMs > 0 && sampleAtMs - known.readAtMs < restatMs) return known.facts;
    if (known) known.readAtMs = sampleAtMs;
    let stat: ProcStat | null = known?.stat ? known.stat.read() : null;
    if (known && stat && stat.startTicks === known.startTicks && stat.state !== 'Z') {
      if (stat.state !== known.facts.state || stat.ppid !== known.facts.ppid || stat.cpuTicks !== known.facts.cpuTicks) {
        known.facts = { ...known.facts, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks };
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
    const facts: HostFacts = { visible: true, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...readStableFacts(pid, stat, options) };
    // A zombie is read afresh every sample (its facts are being released); there is nothing to hold for it.
    if (handle && stat.state === 'Z') {
      handle.close();
      handle = null;
    }
    if (handle) held++;
    // Spread by pid so that a view of 512 processes re-reads a few each sample, not all at once; the first
    // re-read comes between half a period and one period after this read.
    const readAtMs = restatMs > 0 ? sampleAtMs - (pid % Math.max(1, Math.floor(restatMs / 2))) : 0;
    cache.set(pid, { startTicks: stat.startTicks, facts, stat: handle, readAtMs });
    return facts;
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
