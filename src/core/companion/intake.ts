/**
 * What a run keeps of the companion channel, bounded. The channel speaks for the child, and the child may be
 * buggy or hostile: a program sending hundreds of distinct `error` messages of half a megabyte each once grew
 * gpumem to over a gigabyte and wrote a 200 MB history row. So every text is cut to a length, every kind of
 * retained entry has a cap (processes, companion failures per process; OOM reports have theirs in state.ts),
 * the bytes kept over the whole run have a cap, and everything not kept is counted for the report.
 */
import type { CompanionMessage } from './messages.js';
import { applyCompanionMessage, createCompanionState, MAX_KEPT_OOMS, type CompanionState } from './state.js';

/** The bounds on what one attempt keeps from the channel. */
export const COMPANION_LIMITS = {
  /** Python processes with state of their own (ranks, workers with CUDA); more are counted. */
  processes: 256,
  /** Distinct failing features per process (the companion has about ten). */
  errorsPerProcess: 16,
  /** Characters kept of a free text (a failure's message, a path, a version); the rest is cut. */
  textChars: 2000,
  /** Characters kept of an exception text (the Python side already cuts it there). */
  exceptionChars: 8000,
  /** CUDA devices with a per-step memory history per process (each history is bounded in forecast/history.ts). */
  memoryDevicesPerProcess: 16,
  /** Bytes of retained messages kept over the attempt, all processes together. */
  keptBytes: 16 * 1024 * 1024,
} as const;

/** Messages the channel delivered that were not kept, by reason (the report's `notKept`). */
export interface CompanionDrops {
  /** Messages whose pid is not a process of the run (or that named another pid than their connection's). */
  notInRun: number;
  /** Messages beyond a cap of their kind: new processes past `processes`, new features past `errorsPerProcess`. */
  overKindLimit: Record<string, number>;
  /** Messages refused because the bytes kept reached `keptBytes`. */
  overTotalBytes: number;
  /** Texts kept only in part (cut to `textChars`, or `exceptionChars`). */
  textsCut: number;
}

/** The state of one attempt's channel plus what was refused and what is kept, in bytes. */
export interface CompanionIntake {
  state: CompanionState;
  drops: CompanionDrops;
  keptBytes: number;
}

/** A fresh intake. */
export function createCompanionIntake(): CompanionIntake {
  return { state: createCompanionState(), drops: { notInRun: 0, overKindLimit: {}, overTotalBytes: 0, textsCut: 0 }, keptBytes: 0 };
}

/** True when anything was refused or cut. */
export function anyDropped(d: CompanionDrops): boolean {
  return d.notInRun > 0 || d.overTotalBytes > 0 || d.textsCut > 0 || Object.values(d.overKindLimit).some((n) => n > 0);
}

/** Counts a message refused for `pid` not belonging to the run (the caller checked it). */
export function refuseForeign(intake: CompanionIntake): void {
  intake.drops.notInRun++;
}

function cut(intake: CompanionIntake, text: string, max: number = COMPANION_LIMITS.textChars): string {
  if (text.length <= max) return text;
  intake.drops.textsCut++;
  return `${text.slice(0, max)}… (${text.length - max} more characters not kept)`;
}

function cutOrNull(intake: CompanionIntake, text: string | null): string | null {
  return text === null ? null : cut(intake, text);
}

/** The message with every free text cut to its limit. */
function clamp(intake: CompanionIntake, m: CompanionMessage): CompanionMessage {
  switch (m.type) {
    case 'hello':
      return {
        ...m, companionVersion: cut(intake, m.companionVersion), torchVersion: cut(intake, m.torchVersion), pythonVersion: cut(intake, m.pythonVersion),
        config: { ...m.config, snapshotDir: cutOrNull(intake, m.config.snapshotDir) },
        cuda: m.cuda ? { ...m.cuda, cudaVersion: cutOrNull(intake, m.cuda.cudaVersion), visibleDevices: cutOrNull(intake, m.cuda.visibleDevices), problem: cutOrNull(intake, m.cuda.problem) } : null,
      };
    case 'devices':
      return { ...m, devices: m.devices.map((d) => ({ ...d, uuid: cutOrNull(intake, d.uuid), name: cutOrNull(intake, d.name) })) };
    case 'oom':
      return { ...m, snapshotPath: cutOrNull(intake, m.snapshotPath), snapshotError: cutOrNull(intake, m.snapshotError) };
    case 'exception':
      return { ...m, exceptionType: cut(intake, m.exceptionType), message: cut(intake, m.message, COMPANION_LIMITS.exceptionChars) };
    case 'error':
      return { ...m, what: cut(intake, m.what), message: cut(intake, m.message) };
    case 'cuda':
      return { ...m, problem: cut(intake, m.problem) };
    case 'rank':
      return { ...m, backend: cutOrNull(intake, m.backend) };
    case 'sites':
      return { ...m, sites: m.sites.map((x) => ({ ...x, site: cut(intake, x.site) })) };
    default:
      return m;
  }
}

/**
 * Bytes a message adds to what is kept: zero for one that only replaces a slot already held (statistics,
 * step totals, a repeated failure of the same feature) or that state.ts only counts (OOMs past its cap).
 */
function growth(state: CompanionState, m: CompanionMessage): number {
  const p = state.get(m.pid);
  const size = (): number => JSON.stringify(m).length;
  switch (m.type) {
    case 'hello':
      return p?.hello ? 0 : size();
    case 'devices':
      return size();
    case 'oom':
      return (p?.ooms.length ?? 0) < MAX_KEPT_OOMS ? size() : 0;
    case 'exception':
      return m.oom ? m.message.length : 0;
    case 'error':
      return p?.errors.has(m.what) ? 0 : size();
    case 'cuda':
      return m.problem.length;
    case 'memory':
      // A history is bounded (about 2,000 steps of 5 numbers); its first message reserves that much.
      return p?.memory.has(m.device) ? 0 : 128 * 1024;
    default:
      return p ? 0 : 256;
  }
}

/**
 * Applies one parsed message within the limits; returns it as applied (its texts cut), or null when it was
 * only counted. The caller has already checked that `message.pid` belongs to the run.
 */
export function admitCompanionMessage(intake: CompanionIntake, message: CompanionMessage, cudaVisibleDevices: string | null = null): CompanionMessage | null {
  const { state, drops } = intake;
  const overKind = (kind: string): null => {
    drops.overKindLimit[kind] = (drops.overKindLimit[kind] ?? 0) + 1;
    return null;
  };
  if (!state.has(message.pid) && state.size >= COMPANION_LIMITS.processes) return overKind('process');
  const m = clamp(intake, message);
  const p = state.get(m.pid);
  if (m.type === 'error' && p && !p.errors.has(m.what) && p.errors.size >= COMPANION_LIMITS.errorsPerProcess) return overKind('error');
  if ((m.type === 'memory' || m.type === 'sites') && p && !p.memory.has(m.device) && p.memory.size >= COMPANION_LIMITS.memoryDevicesPerProcess) return overKind('memory');
  const adds = growth(state, m);
  if (intake.keptBytes + adds > COMPANION_LIMITS.keptBytes) {
    drops.overTotalBytes++;
    return null;
  }
  intake.keptBytes += adds;
  applyCompanionMessage(state, m, cudaVisibleDevices);
  return m;
}
