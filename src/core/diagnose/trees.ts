/**
 * Groups GPU processes into trees: a training process with its children (DataLoader workers, spawned
 * ranks), and a launcher (torchrun, accelerate, deepspeed, or any parent that is not on a GPU itself) with
 * its ranks. Totals per tree and per user.
 */
import type { HostFacts } from '../types.js';
import { commandText, isPythonCommand, isReaperCommand, launcherName } from './classify.js';
import type { ProcessTree, ProcessView, UserTotal } from './types.js';

/**
 * True when a parent that is not on a GPU should be the root of its GPU children's tree. A known launcher
 * always is, and so is a Python parent of two or more GPU processes (mp.spawn, custom launchers); a shell,
 * process reaper or any other program is not, since independent jobs share those. An unknown parent (no /proc
 * facts, e.g. in a recording) is, when it has two or more GPU children: they share that parent, which is a
 * fact, and the tree says the parent's command is unknown.
 */
function groupsUnder(ppid: number, parent: HostFacts | undefined, gpuChildren: number): boolean {
  if (ppid <= 1) return false;
  if (!parent || !parent.cmdline) return gpuChildren >= 2;
  if (launcherName(parent.cmdline)) return true;
  if (isReaperCommand(parent.cmdline)) return false;
  return isPythonCommand(parent.cmdline, parent.exe) && gpuChildren >= 2;
}

/** Finds the root pid of every process: the topmost GPU process above it, or the launcher above that. */
export function buildTrees(views: readonly ProcessView[], ancestors: Readonly<Record<number, HostFacts>>): ProcessTree[] {
  const byPid = new Map<number, ProcessView>();
  for (const v of views) if (!byPid.has(v.pid)) byPid.set(v.pid, v);
  // Memoised per pid: a sample of 512 processes asks for every pid's top and root, each walk would repeat.
  const tops = new Map<number, number>();
  const topOf = (pid: number): number => {
    const known = tops.get(pid);
    if (known !== undefined) return known;
    let current = pid;
    // At most one step per process: a cycle in bad /proc data ends the walk instead of looping.
    for (let steps = 0; steps <= byPid.size; steps++) {
      const ppid = byPid.get(current)?.ppid ?? null;
      if (ppid === null || !byPid.has(ppid) || ppid === pid) break;
      current = ppid;
    }
    tops.set(pid, current);
    return current;
  };
  // Count, per non-GPU parent, how many topmost GPU processes sit directly under it.
  const topSet = new Set<number>();
  for (const pid of byPid.keys()) topSet.add(topOf(pid));
  const childrenOfParent = new Map<number, number>();
  for (const top of topSet) {
    const ppid = byPid.get(top)?.ppid;
    if (ppid !== null && ppid !== undefined) childrenOfParent.set(ppid, (childrenOfParent.get(ppid) ?? 0) + 1);
  }
  // The verdict depends on the parent only: 512 tops under one shell are one question, not 512.
  const grouping = new Map<number, boolean>();
  const rootOf = (pid: number): { root: number; launcher: boolean } => {
    const top = topOf(pid);
    const ppid = byPid.get(top)?.ppid ?? null;
    if (ppid === null) return { root: top, launcher: false };
    let groups = grouping.get(ppid);
    if (groups === undefined) {
      groups = groupsUnder(ppid, ancestors[ppid], childrenOfParent.get(ppid) ?? 0);
      grouping.set(ppid, groups);
    }
    return groups ? { root: ppid, launcher: true } : { root: top, launcher: false };
  };

  const trees = new Map<number, ProcessTree>();
  // A pid has one root, so one set of listed pids serves every tree (not two sets per tree: 512 lone processes
  // are 512 trees).
  const listed = new Set<number>();
  const listedUnknown = new Set<number>();
  for (const v of views) {
    const { root, launcher } = rootOf(v.pid);
    let tree = trees.get(root);
    if (!tree) {
      const rootFacts = launcher ? ancestors[root] : byPid.get(root)?.row.host ?? undefined;
      tree = {
        rootPid: root,
        rootCommand: launcher ? commandText(rootFacts?.cmdline ?? null, null) : (byPid.get(root)?.command ?? null),
        launcher,
        user: rootFacts?.user ?? v.user,
        pids: [],
        bytesByGpu: {},
        totalBytes: 0,
        unknownPids: [],
      };
      trees.set(root, tree);
    }
    if (!listed.has(v.pid)) {
      listed.add(v.pid);
      tree.pids.push(v.pid);
    }
    if (v.usedBytes === null) {
      if (!listedUnknown.has(v.pid)) {
        listedUnknown.add(v.pid);
        tree.unknownPids.push(v.pid);
      }
      continue;
    }
    const key = v.gpuIndex === null ? '?' : String(v.gpuIndex);
    tree.bytesByGpu[key] = (tree.bytesByGpu[key] ?? 0) + v.usedBytes;
    tree.totalBytes += v.usedBytes;
  }
  return [...trees.values()].sort((a, b) => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid);
}

const treeIndex = new WeakMap<readonly ProcessTree[], Map<number, ProcessTree>>();

/** The tree a pid belongs to (the first that lists it). The index is built once per list of trees. */
export function treeOf(trees: readonly ProcessTree[], pid: number): ProcessTree | undefined {
  let index = treeIndex.get(trees);
  if (!index) {
    index = new Map();
    for (const t of trees) for (const p of t.pids) if (!index.has(p)) index.set(p, t);
    treeIndex.set(trees, index);
  }
  return index.get(pid);
}

/** Memory per user over all GPUs ("unknown user" for rows without /proc facts), largest first. */
export function userTotals(views: readonly ProcessView[]): UserTotal[] {
  const totals = new Map<string, UserTotal>();
  const seen = new Map<string, Set<number>>();
  for (const v of views) {
    const user = v.user ?? (v.uid !== null ? `uid ${v.uid}` : 'unknown user');
    const t = totals.get(user) ?? { user, totalBytes: 0, bytesByGpu: {}, pids: [] };
    const pids = seen.get(user) ?? new Set<number>();
    seen.set(user, pids);
    if (!pids.has(v.pid)) {
      pids.add(v.pid);
      t.pids.push(v.pid);
    }
    if (v.usedBytes !== null) {
      const key = v.gpuIndex === null ? '?' : String(v.gpuIndex);
      t.bytesByGpu[key] = (t.bytesByGpu[key] ?? 0) + v.usedBytes;
      t.totalBytes += v.usedBytes;
    }
    totals.set(user, t);
  }
  return [...totals.values()].sort((a, b) => b.totalBytes - a.totalBytes || a.user.localeCompare(b.user));
}
