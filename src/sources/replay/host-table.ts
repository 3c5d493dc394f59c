/**
 * Host facts written once per process (format versions 2 and 3): a `{"hostFacts": {ID: facts…}}` line defines
 * them before the first sample that needs them, and a sample's process row then carries `"host": {"ref": ID}`
 * plus the facts the enricher re-reads every sample. Version 2 writes `state` and `ppid` only when they
 * differ from the definition; version 3 always writes every volatile fact the process has (`state`, `ppid`,
 * `cpuTicks`, `cpuTicksAtMs`, `cpuPct`, `rssBytes`), so a row's reference keeps its fields from sample to sample
 * and a delta line carries only the values that moved (a busy process's CPU ticks no longer redefine its
 * command line and environment every sample). Row fields that are null and nullable are left out (readers
 * fill them). At 8 GPUs × 64 processes this is what keeps a sample from repeating every command line,
 * environment and cgroup 512 times.
 */
import type { HostFacts, Sample } from '../../core/types.js';
import { isObject, NULLABLE_PROCESS_FIELDS } from './validate.js';

/** The key of a definitions line. */
export const HOST_FACTS_KEY = 'hostFacts';

/** Facts the enricher re-reads every sample: carried beside the reference, never a reason for a new definition (version 3). */
export const VOLATILE_HOST_FACTS = ['state', 'ppid', 'cpuTicks', 'cpuTicksAtMs', 'cpuPct', 'rssBytes'] as const;

/** Facts a version 2 reference may carry when they differ from the definition. */
const V2_VOLATILE = ['state', 'ppid'] as const;

type Volatile = (typeof VOLATILE_HOST_FACTS)[number];

/** A process row's host facts by reference, with the volatile facts that override the definition. */
export type HostRef = { ref: number } & Partial<Pick<HostFacts, Volatile>>;

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
      // Maps (`unavailable`) are copied: a version 3 writer compares this row with the next sample's, and a
      // source that reused the map would otherwise hide its own change.
      out[key] = isObject(value) ? { ...value } : value;
    }
  }
  return out as EncodedRow;
}

/**
 * Whether `next` is the row `was` (the previous sample's at the same place) with only its host facts re-read:
 * every other field the same value, maps (`unavailable`) equal in content to the copy `before` wrote, no field
 * added or taken away. A /proc round dates every row's facts; this lets such a row keep its encoding.
 */
function sameButHost(was: Row, next: Row, before: EncodedRow): boolean {
  const a = was as unknown as Record<string, unknown>;
  const b = next as unknown as Record<string, unknown>;
  const written = before as unknown as Record<string, unknown>;
  let count = 0;
  for (const key in b) {
    count++;
    if (key === 'host') continue;
    const value = b[key];
    if (isObject(value)) {
      if (!sameFlatMap(value, written[key])) return false;
    } else if (value !== a[key] || !(key in a)) return false;
  }
  for (const _ in a) count--;
  return count === 0;
}

/** Equal maps of primitive values (a row's `unavailable` reasons), compared without building text. */
function sameFlatMap(a: Record<string, unknown>, b: unknown): boolean {
  if (!isObject(b)) return false;
  let count = 0;
  for (const key in a) {
    count++;
    const value = a[key];
    if (isObject(value) || value !== b[key]) return false;
  }
  for (const _ in b) count--;
  return count === 0;
}

/** Turns samples into v2 lines: the definitions new in this sample (or null) and the sample by reference. */
export type HostFactsEncoder = (sample: Sample) => { definitions: Record<string, HostFacts> | null; sample: EncodedSample };

/**
 * The identity of a process's facts: everything but the volatile values (which of them are present counts,
 * since a reference can replace a value but not take one away).
 */
function definitionKey(host: HostFacts, volatile: readonly Volatile[]): string {
  const masked: Record<string, unknown> = { ...host };
  for (const name of volatile) if (name in masked) masked[name] = true;
  return JSON.stringify(masked);
}

/**
 * Whether `host` has the facts `known` was defined from, tested without building the key: every non-volatile
 * fact the same value or the same object (the enricher keeps a process's command line, environment and cgroup
 * objects while they hold), and the same facts present. False only means "compute the key".
 */
function sameDefinition(host: HostFacts, known: HostFacts, volatile: readonly Volatile[]): boolean {
  if (host === known) return true;
  const a = host as unknown as Record<string, unknown>;
  const b = known as unknown as Record<string, unknown>;
  let count = 0;
  for (const key in a) {
    count++;
    if (!(key in b)) return false;
    if (a[key] !== b[key] && !(volatile as readonly string[]).includes(key)) return false;
  }
  for (const _ in b) count--;
  return count === 0;
}

/**
 * Makes an encoder that remembers, per pid, the facts it last defined. Facts equal in everything but the
 * volatile ones reuse the definition; anything else (a reused pid, a process turned zombie) gets a new one.
 * Pids absent from a sample are forgotten, so memory follows the live processes, not the recording's length.
 * `version` 3 (the default) writes every volatile fact in each reference; 2 writes state and ppid when they differ.
 */
export function createHostFactsEncoder(version: 2 | 3 = 3): HostFactsEncoder {
  const byPid = new Map<number, { key: string; id: number; facts: HostFacts }>();
  const volatile: readonly Volatile[] = version === 2 ? V2_VOLATILE : VOLATILE_HOST_FACTS;
  let nextId = 1;
  // A source that hands out the previous sample's very row array (nothing in it moved: rows are never changed
  // once handed out) gets the previous encoded rows back: no definition, reference or copy to make.
  let last: { raw: Sample['processes']; encoded: EncodedRow[] } | null = null;
  const referenceOf = (known: { id: number; facts: HostFacts }, host: HostFacts): HostRef => {
    const ref: Record<string, unknown> = { ref: known.id };
    for (const name of volatile) {
      if (version === 3 ? name in host : host[name] !== known.facts[name]) ref[name] = host[name];
    }
    return ref as HostRef;
  };
  return (sample) => {
    if (last !== null && sample.processes === last.raw) return { definitions: null, sample: { ...sample, processes: last.encoded } };
    let definitions: Record<string, HostFacts> | null = null;
    const seen = new Set<number>();
    const previous = last;
    const processes = sample.processes.map((p, i) => {
      // The very row the previous sample had at this place (a source hands back rows whose numbers did not
      // move): its encoding is the one made then, and its pid's definition is still known.
      if (previous !== null && previous.raw[i] === p) {
        if (p.host !== null) seen.add(p.pid);
        return previous.encoded[i] as EncodedRow;
      }
      if (p.host === null) return compact(p, null);
      seen.add(p.pid);
      let known = byPid.get(p.pid);
      // The same row with its facts re-read (a /proc round): the encoding made then with a new reference, so
      // the delta finds every other field the same object and compares only the volatile facts.
      const was = previous?.raw[i];
      const before = previous?.encoded[i];
      if (known !== undefined && was !== undefined && before?.host !== undefined && was.pid === p.pid && sameButHost(was, p, before)
        && sameDefinition(p.host, known.facts, volatile)) {
        return { ...before, host: referenceOf(known, p.host) };
      }
      // The key (a JSON text of the facts) only when the cheap comparison cannot vouch for the definition.
      const key = known && sameDefinition(p.host, known.facts, volatile) ? known.key : definitionKey(p.host, volatile);
      if (known?.key !== key) {
        known = { key, id: nextId++, facts: p.host };
        byPid.set(p.pid, known);
        (definitions ??= {})[known.id] = p.host;
      }
      return compact(p, referenceOf(known, p.host));
    });
    for (const pid of byPid.keys()) if (!seen.has(pid)) byPid.delete(pid);
    last = { raw: sample.processes, encoded: processes };
    return { definitions, sample: { ...sample, processes } };
  };
}

/** Reads v2 lines back: definitions are collected, references resolved into whole host facts. */
export interface HostFactsDecoder {
  /** True when `line` is a definitions line (then it has been taken in). Returns a problem text for a bad one. */
  define(line: Record<string, unknown>): { isDefinitions: boolean; problem: string | null };
  /** Replaces every `{"ref": ID}` host of a parsed sample line in place; returns a problem text or null. */
  resolve(line: Record<string, unknown>): string | null;
  /** Replaces the `{"ref": ID}` host of one row in place (`where` names it in the problem text). */
  resolveRow(row: Record<string, unknown>, where: string): string | null;
}

/** Makes a decoder for one recording. */
export function createHostFactsDecoder(): HostFactsDecoder {
  const defined = new Map<number, Record<string, unknown>>();
  const resolveRow = (p: Record<string, unknown>, where: string): string | null => {
    if (!isObject(p.host) || !('ref' in p.host)) return null;
    const { ref, ...volatile } = p.host;
    const facts = typeof ref === 'number' ? defined.get(ref) : undefined;
    if (!facts) return `${where}.host.ref ${JSON.stringify(ref ?? null)} names no host facts defined on an earlier line`;
    // A copy per row: validation fills absent fields in place, and rows must not share one object.
    p.host = { ...facts, ...volatile };
    return null;
  };
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
        if (!isObject(p)) continue;
        const problem = resolveRow(p, `processes[${i}]`);
        if (problem) return problem;
      }
      return null;
    },
    resolveRow,
  };
}
