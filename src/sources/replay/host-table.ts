/**
 * Format version 2 writes each process's host facts once: a `{"hostFacts": {ID: facts…}}` line defines
 * them before the first sample that needs them, and a sample's process row then carries
 * `"host": {"ref": ID}`, plus `state` and `ppid` when they differ from the definition (the only facts the
 * enricher re-reads every sample). Row fields that are null and nullable are left out (readers fill them). At 8 GPUs × 64 processes this is what keeps a sample from repeating
 * every command line, environment and cgroup 512 times.
 */
import type { HostFacts, Sample } from '../../core/types.js';
import { isObject, NULLABLE_PROCESS_FIELDS } from './validate.js';

/** The key of a definitions line. */
export const HOST_FACTS_KEY = 'hostFacts';

/** A process row's host facts by reference. */
export interface HostRef {
  ref: number;
  state?: HostFacts['state'];
  ppid?: HostFacts['ppid'];
}

type Row = Sample['processes'][number];

/** A process row as a v2 line holds it: host facts by reference, nullable fields that are null left out. */
export type EncodedRow = Partial<Omit<Row, 'host'>> & Pick<Row, 'pid' | 'kind' | 'unavailable'> & { host?: HostRef };

/** A sample as a v2 line holds it. */
export type EncodedSample = Omit<Sample, 'processes'> & { processes: EncodedRow[] };

/** The row without the null values a reader puts back (absent nullable fields read as null). */
function compact(row: Row, host: HostRef | null): EncodedRow {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === 'host') {
      if (host !== null) out.host = host;
    } else if (value !== null || !NULLABLE_PROCESS_FIELDS.has(key)) {
      out[key] = value;
    }
  }
  return out as EncodedRow;
}

/** Turns samples into v2 lines: the definitions new in this sample (or null) and the sample by reference. */
export type HostFactsEncoder = (sample: Sample) => { definitions: Record<string, HostFacts> | null; sample: EncodedSample };

/**
 * Makes an encoder that remembers, per pid, the facts it last defined. Facts equal in everything but state
 * and ppid reuse the definition; anything else (a reused pid, a process turned zombie) gets a new one.
 * Pids absent from a sample are forgotten, so memory follows the live processes, not the recording's length.
 */
export function createHostFactsEncoder(): HostFactsEncoder {
  const byPid = new Map<number, { key: string; id: number; facts: HostFacts }>();
  let nextId = 1;
  return (sample) => {
    let definitions: Record<string, HostFacts> | null = null;
    const seen = new Set<number>();
    const processes = sample.processes.map((p) => {
      if (p.host === null) return compact(p, null);
      seen.add(p.pid);
      const key = JSON.stringify({ ...p.host, state: undefined, ppid: undefined });
      let known = byPid.get(p.pid);
      if (known?.key !== key) {
        known = { key, id: nextId++, facts: p.host };
        byPid.set(p.pid, known);
        (definitions ??= {})[known.id] = p.host;
      }
      const ref: HostRef = { ref: known.id };
      if (p.host.state !== known.facts.state) ref.state = p.host.state;
      if (p.host.ppid !== known.facts.ppid) ref.ppid = p.host.ppid;
      return compact(p, ref);
    });
    for (const pid of byPid.keys()) if (!seen.has(pid)) byPid.delete(pid);
    return { definitions, sample: { ...sample, processes } };
  };
}

/** Reads v2 lines back: definitions are collected, references resolved into whole host facts. */
export interface HostFactsDecoder {
  /** True when `line` is a definitions line (then it has been taken in). Returns a problem text for a bad one. */
  define(line: Record<string, unknown>): { isDefinitions: boolean; problem: string | null };
  /** Replaces every `{"ref": ID}` host of a parsed sample line in place; returns a problem text or null. */
  resolve(line: Record<string, unknown>): string | null;
}

/** Makes a decoder for one recording. */
export function createHostFactsDecoder(): HostFactsDecoder {
  const defined = new Map<number, Record<string, unknown>>();
  return {
    define(line) {
      if (!(HOST_FACTS_KEY in line) || 'timeMs' in line) return { isDefinitions: false, problem: null };
      const defs = line[HOST_FACTS_KEY];
      if (!isObject(defs)) return { isDefinitions: true, problem: `${HOST_FACTS_KEY} must be an object of host facts by id` };
      for (const [id, facts] of Object.entries(defs)) {
        if (!/^\d+$/.test(id) || !isObject(facts)) return { isDefinitions: true, problem: `${HOST_FACTS_KEY}.${id} must be host facts under a numeric id` };
        defined.set(Number(id), facts);
      }
      return { isDefinitions: true, problem: null };
    },
    resolve(line) {
      if (!Array.isArray(line.processes)) return null;
      for (const [i, p] of (line.processes as unknown[]).entries()) {
        if (!isObject(p) || !isObject(p.host) || !('ref' in p.host)) continue;
        const ref = p.host as Record<string, unknown>;
        const facts = typeof ref.ref === 'number' ? defined.get(ref.ref) : undefined;
        if (!facts) return `processes[${i}].host.ref ${JSON.stringify(ref.ref ?? null)} names no host facts defined on an earlier line`;
        // A copy per row: validation fills absent fields in place, and rows must not share one object.
        p.host = { ...facts, ...('state' in ref ? { state: ref.state } : {}), ...('ppid' in ref ? { ppid: ref.ppid } : {}) };
      }
      return null;
    },
  };
}
