/**
 * The one-sample report (views, trees, accounting, users; no rules) of a sample whose rows are those of the
 * sample before, with only numbers moved: memory, SM shares, a GPU's utilisation. A live view at 1 Hz on a busy
 * node gets such a sample almost every second (a training job's memory moves, its GPU's load moves), and
 * building roles, trees and their maps again for 512 unchanged rows was most of the view's work per sample.
 * What a row's role, tree and visibility are decided from (its pid, GPU, host facts, the ancestors, the
 * companion) must be equal; then each view gets the row's new numbers and the totals are summed again, and the
 * result equals diagnose() of the new sample (test/core/diagnose/refresh.test.ts checks it on changed fleets).
 */
import { sameData } from '../same-data.js';
import type { GpuProcess, HostFacts, Sample } from '../types.js';
import { accountDevice } from './accounting.js';
import { DIAGNOSE_SCHEMA_VERSION, type DiagnoseReport } from './engine.js';
import { measureUtil } from './process-view.js';
import { treeOf, userTotals } from './trees.js';
import type { DiagnoseInput, ProcessTree, ProcessView } from './types.js';

/** Host facts that are only counted or shown (CPU time, RSS): no role, tree or view field is decided from them. */
const COUNTED_ONLY: ReadonlySet<string> = new Set(['cpuTicks', 'cpuTicksAtMs', 'cpuPct', 'rssBytes']);

/** Equal in every host fact except the counted ones; a field added to HostFacts is compared by default. */
export function sameHostLayout(a: HostFacts | null, b: HostFacts | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  for (const k in x) if (!COUNTED_ONLY.has(k) && !sameData(x[k], y[k])) return false;
  for (const k in y) if (!COUNTED_ONLY.has(k) && !(k in x) && y[k] !== undefined) return false;
  return true;
}

/** Equal ancestors (pids and their facts, counted facts aside). */
export function sameAncestors(a: DiagnoseInput['ancestors'], b: DiagnoseInput['ancestors']): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) {
    const pid = Number(k);
    if (!(pid in b) || !sameHostLayout(a[pid] as HostFacts, b[pid] as HostFacts)) return false;
  }
  return true;
}

function sameRowLayout(a: GpuProcess, b: GpuProcess): boolean {
  return a === b || (a.pid === b.pid && a.gpuIndex === b.gpuIndex && a.gpuUuid === b.gpuUuid && a.name === b.name
    && a.kind === b.kind && sameHostLayout(a.host, b.host));
}

/** True when `next`'s devices and rows are `previous`'s with only numbers moved (see the module comment). */
export function sameRows(previous: Sample, next: Sample): boolean {
  if (previous.devices.length !== next.devices.length || previous.processes.length !== next.processes.length) return false;
  for (let i = 0; i < next.devices.length; i++) {
    const a = previous.devices[i]!;
    const b = next.devices[i]!;
    // deviceIndexOf matches rows to devices by index, UUID and MIG instances.
    if (a !== b && (a.index !== b.index || a.uuid !== b.uuid || !sameData(a.migInstances, b.migInstances))) return false;
  }
  for (let i = 0; i < next.processes.length; i++) if (!sameRowLayout(previous.processes[i]!, next.processes[i]!)) return false;
  return true;
}

/** Bytes and unknown pids of each tree summed again over the new views, in buildTrees' order. */
function retotal(trees: readonly ProcessTree[], views: readonly ProcessView[]): ProcessTree[] {
  const fresh = new Map<ProcessTree, ProcessTree>();
  for (const t of trees) fresh.set(t, { ...t, bytesByGpu: {}, totalBytes: 0, unknownPids: [] });
  const unknown = new Set<number>();
  for (const v of views) {
    const old = treeOf(trees, v.pid);
    const tree = old && fresh.get(old);
    if (!tree) continue;
    if (v.usedBytes === null) {
      if (!unknown.has(v.pid)) {
        unknown.add(v.pid);
        tree.unknownPids.push(v.pid);
      }
      continue;
    }
    const key = v.gpuIndex === null ? '?' : String(v.gpuIndex);
    tree.bytesByGpu[key] = (tree.bytesByGpu[key] ?? 0) + v.usedBytes;
    tree.totalBytes += v.usedBytes;
  }
  return [...fresh.values()].sort((a, b) => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid);
}

/** What a one-sample report was built from, kept beside it so that the next sample can be checked against it. */
export interface OneSampleBasis {
  sample: Sample;
  input: Omit<DiagnoseInput, 'samples'>;
  report: DiagnoseReport;
}

const noCompanion = (c: DiagnoseInput['companion']): boolean => c === undefined || Object.keys(c).length === 0;

/**
 * The one-sample report of `next` from `basis`, or null when something a view, role or tree is decided from
 * differs (then diagnose() builds it whole). Companion statistics split the accounting and move every second:
 * a supervised node takes the whole path.
 */
export function refreshOneSample(basis: OneSampleBasis, next: Sample, input: Omit<DiagnoseInput, 'samples'>): DiagnoseReport | null {
  const was = basis.input;
  if (basis.report.window.samples !== 1 || basis.report.findings.length > 0) return null;
  if (input.pidNamespace !== was.pidNamespace || !sameData(input.viewer, was.viewer)) return null;
  if (!noCompanion(input.companion) || !noCompanion(was.companion)) return null;
  if (!sameAncestors(was.ancestors, input.ancestors) || !sameRows(basis.sample, next)) return null;
  const window = [next];
  const processes = basis.report.processes.map((v, i): ProcessView => {
    const row = next.processes[i] as GpuProcess;
    const util = measureUtil(row, v.gpuIndex, window);
    const usedBytes = row.usedBytes;
    const startMs = row.host?.startTimeMs;
    return {
      ...v,
      row,
      usedBytes,
      // As buildProcessViews decides them; a worker stays a worker through the launcher's rank rewrite.
      ageMs: startMs !== null && startMs !== undefined ? Math.max(0, next.timeMs - startMs) : null,
      util,
      contextOnly: v.role === 'worker' && usedBytes !== null && usedBytes > 0 && (util === null || util.maxPct === 0),
    };
  });
  return {
    schemaVersion: DIAGNOSE_SCHEMA_VERSION,
    timeMs: next.timeMs,
    window: { samples: 1, firstMs: next.timeMs, lastMs: next.timeMs, spanMs: 0 },
    source: next.source,
    devices: [...next.devices],
    accounting: next.devices.map((d) => accountDevice(d, processes, input.companion ?? {})),
    processes,
    trees: retotal(basis.report.trees, processes),
    users: userTotals(processes),
    findings: [],
  };
}
