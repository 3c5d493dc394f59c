/**
 * A one-sample report brought forward to a newer sample in which only memory moved (a live view's common
 * case: a few rows grow every second, nothing starts, ends or changes parent). Rebuilding views, roles, trees
 * and the accounting of every row for that is most of a live view's work; here only the rows that moved get
 * a new view, only their trees new totals, only their GPUs a new accounting.
 */
import type { LiveCompanionProcess } from '../companion/live.js';
import type { Device, GpuProcess, HostFacts, Sample } from '../types.js';
import { accountDevice } from './accounting.js';
import type { DiagnoseReport } from './engine.js';
import { contextOnlyOf, measureUtil } from './process-view.js';
import type { DeviceAccounting, ProcessTree, ProcessView, UserTotal } from './types.js';

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameEnv(a: HostFacts['cudaEnv'], b: HostFacts['cudaEnv']): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const keys = Object.keys(b) as Array<keyof typeof b>;
  return keys.length === Object.keys(a).length && keys.every((k) => a[k] === b[k]);
}

/** Host facts the same for the analysis: the same process, parent, state, owner, command and environment. */
function sameFactsForViews(a: HostFacts | null, b: HostFacts | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  // A live enricher re-dates a process's facts at each re-read (CPU ticks, RSS); those are not analysed here.
  return a.visible === b.visible && a.startTicks === b.startTicks && a.state === b.state && a.ppid === b.ppid && a.uid === b.uid
    && a.user === b.user && sameList(a.cmdline, b.cmdline) && a.exe === b.exe && sameEnv(a.cudaEnv, b.cudaEnv) && a.startTimeMs === b.startTimeMs;
}

/** Two sets of ancestors' facts the same for the analysis (a live view re-reads them every few seconds). */
export function sameAncestors(a: Readonly<Record<number, HostFacts>>, b: Readonly<Record<number, HostFacts>>): boolean {
  const keys = Object.keys(b);
  if (keys.length !== Object.keys(a).length) return false;
  for (const k of keys) {
    const x = a[Number(k)];
    const y = b[Number(k)] as HostFacts;
    if (x === undefined || !sameFactsForViews(x, y)) return false;
  }
  return true;
}

/** A row the same process on the same GPU, with the same facts; its memory and SM share may differ. */
function sameRowButNumbers(a: GpuProcess, b: GpuProcess): boolean {
  return a.pid === b.pid && a.gpuIndex === b.gpuIndex && a.gpuUuid === b.gpuUuid && a.gpuInstanceId === b.gpuInstanceId
    && a.computeInstanceId === b.computeInstanceId && a.name === b.name && a.kind === b.kind && sameFactsForViews(a.host, b.host)
    // A row whose memory becomes or stops being unknown moves it between a tree's bytes and its unknown pids.
    && (a.usedBytes === null) === (b.usedBytes === null);
}

/** A device the same for the accounting but for its used and free memory and the numbers only drawn. */
function sameDeviceButMemory(a: Device, b: Device): boolean {
  return a === b || (a.index === b.index && a.uuid === b.uuid && a.status === b.status && a.name === b.name
    && a.memory.totalBytes === b.memory.totalBytes && a.memory.reservedBytes === b.memory.reservedBytes
    && (a.memory.usedBytes === null) === (b.memory.usedBytes === null) && a.migInstances.length === b.migInstances.length);
}

const utilClass = (pct: number | null): number => (pct === null ? 0 : pct === 0 ? 1 : 2);

/**
 * The trees of a report with some members' memory moved: each moved tree a new object, re-sorted only when a
 * move broke the order (largest first, then by root pid, as buildTrees sorts). Which tree a pid is in is
 * looked up once per set of trees and carried to the patched list, whose trees are the same.
 */
class TreeTotals {
  private out: ProcessTree[] | null = null;
  private readonly at: Map<number, number>;
  private readonly moved = new Set<number>();

  constructor(private readonly trees: readonly ProcessTree[]) {
    this.at = placesOfPids(trees);
  }

  /** Adds `deltaBytes` to the tree of `pid` on GPU `key`; false when no tree lists the pid. */
  move(pid: number, key: string, deltaBytes: number): boolean {
    const at = this.at.get(pid);
    if (at === undefined) return false;
    this.out ??= this.trees.slice();
    const tree = this.out[at] as ProcessTree;
    this.out[at] = { ...tree, bytesByGpu: { ...tree.bytesByGpu, [key]: (tree.bytesByGpu[key] ?? 0) + deltaBytes }, totalBytes: tree.totalBytes + deltaBytes };
    this.moved.add(at);
    return true;
  }

  result(): ProcessTree[] {
    if (this.out === null) return this.trees as ProcessTree[];
    const out = this.out;
    const inOrder = (i: number): boolean => i <= 0 || i >= out.length || treeOrder(out[i - 1] as ProcessTree, out[i] as ProcessTree) < 0;
    if ([...this.moved].every((i) => inOrder(i) && inOrder(i + 1))) {
      treePlaces.set(out, this.at);
      return out;
    }
    return out.sort(treeOrder);
  }
}

const treeOrder = (a: ProcessTree, b: ProcessTree): number => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid;

/** The place of each pid's tree in a list of trees (the first that lists it, as treeOf finds). */
const treePlaces = new WeakMap<readonly ProcessTree[], Map<number, number>>();
function placesOfPids(trees: readonly ProcessTree[]): Map<number, number> {
  let at = treePlaces.get(trees);
  if (at) return at;
  at = new Map();
  for (let i = 0; i < trees.length; i++) for (const pid of (trees[i] as ProcessTree).pids) if (!at.has(pid)) at.set(pid, i);
  treePlaces.set(trees, at);
  return at;
}

/** Users' totals with some memory moved, as userTotals orders them (largest first, then by name). */
class UserTotals {
  private out: UserTotal[] | null = null;

  constructor(private readonly users: readonly UserTotal[]) {}

  /** Adds `deltaBytes` to `user`'s total on GPU `key`; false when no total is that user's. */
  move(user: string, key: string, deltaBytes: number): boolean {
    this.out ??= this.users.slice();
    const at = this.out.findIndex((u) => u.user === user);
    if (at < 0) return false;
    const t = this.out[at] as UserTotal;
    this.out[at] = { ...t, bytesByGpu: { ...t.bytesByGpu, [key]: (t.bytesByGpu[key] ?? 0) + deltaBytes }, totalBytes: t.totalBytes + deltaBytes };
    return true;
  }

  result(): UserTotal[] {
    return this.out === null ? (this.users as UserTotal[]) : this.out.sort((a, b) => b.totalBytes - a.totalBytes || a.user.localeCompare(b.user));
  }
}

/** A GPU's accounting with its used memory and its rows' memory moved (no PyTorch split to follow). */
function movedAccounting(acc: DeviceAccounting, device: Device, visibleDelta: number, hiddenDelta: number): DeviceAccounting {
  const used = device.memory.usedBytes;
  const visibleBytes = acc.visibleBytes + visibleDelta;
  const notVisibleBytes = acc.notVisibleBytes + hiddenDelta;
  return { ...acc, usedBytes: used, freeBytes: device.memory.freeBytes, visibleBytes, notVisibleBytes, residualBytes: used === null ? null : used - visibleBytes - notVisibleBytes };
}

/**
 * The report `report` (built by diagnose from `built` alone, without rules) would be for `next`, or null when
 * `next` differs in more than numbers: a row came or went, moved GPU or changed process, parent, state or
 * command; a device changed status, size or reserve. Equal to `diagnose({ samples: [next] }, [])` with the same
 * viewer, namespace, ancestors and companion but for two things: the age of a row that did not move is the
 * one at `built`, and the findings are `report`'s. The caller passes the same inputs the report was built with.
 */
export function patchReport(
  report: DiagnoseReport,
  built: Sample,
  next: Sample,
  companion: Readonly<Record<number, LiveCompanionProcess>> = {},
): DiagnoseReport | null {
  if (built.devices.length !== next.devices.length || built.processes.length !== next.processes.length) return null;
  if (report.processes.length !== next.processes.length) return null;
  for (let i = 0; i < next.devices.length; i++) if (!sameDeviceButMemory(built.devices[i] as Device, next.devices[i] as Device)) return null;
  let moved: number[] | null = null;
  for (let i = 0; i < next.processes.length; i++) {
    const a = built.processes[i] as GpuProcess;
    const b = next.processes[i] as GpuProcess;
    if (a === b) continue;
    if (!sameRowButNumbers(a, b)) return null;
    (moved ??= []).push(i);
  }
  // A row without an SM share is measured by its GPU's utilisation, and over one sample only whether that is
  // unknown, 0 % or more decides the measure (idle, or unknown): those rows are measured again when it changes.
  const utilMoved = new Set<number>();
  for (let i = 0; i < next.devices.length; i++) {
    const a = built.devices[i] as Device;
    const b = next.devices[i] as Device;
    if (a !== b && utilClass(a.utilization.gpuPct) !== utilClass(b.utilization.gpuPct)) utilMoved.add(b.index);
  }
  if (utilMoved.size > 0) {
    const listed = new Set(moved);
    report.processes.forEach((v, i) => {
      if (v.gpuIndex !== null && utilMoved.has(v.gpuIndex) && (next.processes[i] as GpuProcess).smUtilPct === null && !listed.has(i)) (moved ??= []).push(i);
    });
  }
  const devicesMoved = next.devices.some((d, i) => d !== built.devices[i]);
  if (moved === null && !devicesMoved) return { ...report, timeMs: next.timeMs, window: { samples: 1, firstMs: next.timeMs, lastMs: next.timeMs, spanMs: 0 } };

  const processes = report.processes.slice();
  const trees = new TreeTotals(report.trees);
  const users = new UserTotals(report.users);
  /** Bytes that moved per GPU, visible here and not. */
  const visibleDelta = new Map<number | null, number>();
  const hiddenDelta = new Map<number | null, number>();
  const window = [next];
  for (const i of moved ?? []) {
    const old = report.processes[i] as ProcessView;
    const row = next.processes[i] as GpuProcess;
    const util = measureUtil(row, old.gpuIndex, window);
    const host = row.host;
    const ageMs = host?.startTimeMs !== null && host?.startTimeMs !== undefined ? Math.max(0, next.timeMs - host.startTimeMs) : null;
    processes[i] = { ...old, row, usedBytes: row.usedBytes, util, ageMs, contextOnly: contextOnlyOf(old.role, row.usedBytes, util) };
    const delta = (row.usedBytes ?? 0) - (old.usedBytes ?? 0);
    if (delta === 0) continue;
    const byGpu = old.visible ? visibleDelta : hiddenDelta;
    byGpu.set(old.gpuIndex, (byGpu.get(old.gpuIndex) ?? 0) + delta);
    const key = old.gpuIndex === null ? '?' : String(old.gpuIndex);
    if (!trees.move(old.pid, key, delta) || !users.move(old.user ?? (old.uid !== null ? `uid ${old.uid}` : 'unknown user'), key, delta)) return null;
  }
  // PyTorch's split of a supervised process follows its memory: such a GPU is accounted again whole.
  const supervised = Object.keys(companion).length > 0;
  const accounting = report.accounting.map((acc, i) => {
    const device = next.devices[i] as Device;
    const dVisible = visibleDelta.get(device.index) ?? 0;
    const dHidden = hiddenDelta.get(device.index) ?? 0;
    if (device === built.devices[i] && dVisible === 0 && dHidden === 0) return acc;
    if (supervised) return accountDevice(device, processes, companion);
    return movedAccounting(acc, device, dVisible, dHidden);
  });
  return {
    ...report,
    timeMs: next.timeMs,
    window: { samples: 1, firstMs: next.timeMs, lastMs: next.timeMs, spanMs: 0 },
    devices: [...next.devices],
    accounting,
    processes,
    trees: trees.result(),
    users: users.result(),
  };
}
