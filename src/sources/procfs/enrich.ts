/**
 * Attaching host facts to the processes of a sample. The enricher caches the facts that cannot change while a process lives, keyed by pid
 * and start ticks, so a watch loop re-reads only /proc/PID/stat per process.
 */
import type { HostFacts, Sample } from '../../core/types.js';
import { NOT_HERE, invisibleFacts, readStableFacts, readHostFacts, type ProcOptions } from './host-facts.js';
import { readProcStat } from './stat.js';

/** Returns `sample` with `host` filled on every process (rows are never dropped). */
export type HostEnricher = (sample: Sample) => Sample;

/**
 * Makes an enricher that remembers stable facts per (pid, start ticks). A pid reused by a new process has
 * other start ticks and is read afresh.
 */
export function createHostEnricher(options: ProcOptions = {}): HostEnricher {
  const cache = new Map<number, { startTicks: number; facts: HostFacts }>();
  return (sample) => {
    // One /proc read per pid per sample: a pid on eight GPUs is eight rows but one process.
    const seen = new Map<number, HostFacts>();
    const processes = sample.processes.map((p) => {
      let host = seen.get(p.pid);
      if (!host) {
        host = factsFor(p.pid);
        seen.set(p.pid, host);
      }
      return { ...p, host };
    });
    for (const pid of cache.keys()) if (!seen.has(pid)) cache.delete(pid);
    return { ...sample, processes };
  };

  function factsFor(pid: number): HostFacts {
    const stat = readProcStat(pid, options);
    if (!stat) {
      cache.delete(pid);
      return readHostFacts(pid, options);
    }
    const hit = cache.get(pid);
    if (hit && hit.startTicks === stat.startTicks && stat.state !== 'Z') {
      return { ...hit.facts, state: stat.state, ppid: stat.ppid };
    }
    const facts: HostFacts = { visible: true, state: stat.state, ppid: stat.ppid, ...readStableFacts(pid, stat, options) };
    cache.set(pid, { startTicks: stat.startTicks, facts });
    return facts;
  }
}

/** Fills `host` on every process of one sample from /proc, without caching. */
export function enrichSample(sample: Sample, options: ProcOptions = {}): Sample {
  return createHostEnricher(options)(sample);
}

export { NOT_HERE, invisibleFacts };
