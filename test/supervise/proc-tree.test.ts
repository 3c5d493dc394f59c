import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessTree } from '../../src/supervise/proc-tree.js';

const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

interface FakeProc { pid: number; ppid: number; pgid: number; startTicks: number; state?: string }

/** A fake /proc holding exactly `procs` (stat files only: what ProcessTree reads). */
function fakeProc(root: string, procs: readonly FakeProc[]): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const p of procs) {
    mkdirSync(join(root, String(p.pid)));
    // Fields 4.. of /proc/PID/stat; start time is field 22.
    const rest = [p.ppid, p.pgid, p.pgid, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 1, 0, p.startTicks, 0];
    writeFileSync(join(root, String(p.pid), 'stat'), `${p.pid} (proc ${p.pid}) ${p.state ?? 'S'} ${rest.join(' ')}\n`);
  }
}

function setup(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-proctree-'));
  roots.push(dir);
  return join(dir, 'proc');
}

const pids = (tree: ProcessTree): number[] => tree.live().map((m) => m.pid).sort((a, b) => a - b);

describe('ProcessTree', () => {
  it('finds the child, its descendants and members of its group', () => {
    const proc = setup();
    fakeProc(proc, [
      { pid: 1, ppid: 0, pgid: 1, startTicks: 1 },
      { pid: 100, ppid: 50, pgid: 100, startTicks: 500 },
      { pid: 101, ppid: 100, pgid: 100, startTicks: 510 },
      { pid: 102, ppid: 101, pgid: 300, startTicks: 520 },
      { pid: 103, ppid: 1, pgid: 100, startTicks: 530 },
      { pid: 200, ppid: 1, pgid: 200, startTicks: 540 },
    ]);
    const tree = new ProcessTree(100, 100, proc);
    expect(pids(tree) /* nothing scanned yet */).toEqual([]);
    tree.refresh();
    expect(pids(tree)).toEqual([100, 101, 102, 103]);
  });

  it('keeps a worker re-parented to init after the child is gone', () => {
    const proc = setup();
    fakeProc(proc, [{ pid: 100, ppid: 50, pgid: 100, startTicks: 500 }, { pid: 101, ppid: 100, pgid: 100, startTicks: 510 }]);
    const tree = new ProcessTree(100, 100, proc);
    tree.refresh();
    fakeProc(proc, [{ pid: 101, ppid: 1, pgid: 100, startTicks: 510 }]);
    tree.refresh();
    expect(pids(tree)).toEqual([101]);
  });

  it('never takes a process that was given the reaped child\'s pid (and group id) for the child', () => {
    const proc = setup();
    fakeProc(proc, [{ pid: 100, ppid: 50, pgid: 100, startTicks: 500 }]);
    const tree = new ProcessTree(100, 100, proc);
    tree.refresh();
    expect(pids(tree)).toEqual([100]);
    // The child exits and is reaped; an unrelated program gets pid 100, leads a group 100 and has a child.
    fakeProc(proc, [{ pid: 100, ppid: 7, pgid: 100, startTicks: 900 }, { pid: 101, ppid: 100, pgid: 100, startTicks: 901 }]);
    tree.refresh();
    expect(pids(tree)).toEqual([]);
    expect(tree.running()).toEqual([]);
  });

  it('does not adopt a later group with the child\'s group id once the group was seen empty', () => {
    const proc = setup();
    fakeProc(proc, [{ pid: 100, ppid: 50, pgid: 100, startTicks: 500 }]);
    const tree = new ProcessTree(100, 100, proc);
    tree.refresh();
    fakeProc(proc, []);
    tree.refresh();
    // A new group 100 whose leader has already exited: only its member is visible.
    fakeProc(proc, [{ pid: 300, ppid: 1, pgid: 100, startTicks: 950 }]);
    tree.refresh();
    expect(pids(tree)).toEqual([]);
  });

  it('reads the child\'s start ticks when constructed, so a reused pid is refused even at the first scan', () => {
    const proc = setup();
    fakeProc(proc, [{ pid: 100, ppid: 50, pgid: 100, startTicks: 500 }]);
    const tree = new ProcessTree(100, 100, proc);
    fakeProc(proc, [{ pid: 100, ppid: 7, pgid: 100, startTicks: 900 }]);
    tree.refresh();
    expect(pids(tree)).toEqual([]);
  });
});
