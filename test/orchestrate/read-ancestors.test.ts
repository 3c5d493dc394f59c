/**
 * readAncestors given its previous answer: a launcher seen before costs one stat file, its other facts are read
 * again only when another process took the pid, and the previous answer comes back when nothing changed. A
 * /proc tree of plain files stands in for the kernel's, so the test can change what each file says in between.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GpuProcess, Sample } from '../../src/core/index.js';
import { readAncestors } from '../../src/orchestrate/index.js';
import { readHostFacts, refreshHostFacts } from '../../src/sources/procfs/index.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-ancestors-'));
const procRoot = join(dir, 'proc');
const passwdPath = join(dir, 'passwd');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(passwdPath, 'root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\n');
mkdirSync(procRoot);
writeFileSync(join(procRoot, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
const proc = { procRoot, passwdPath };

/** Writes /proc/PID as the kernel would show a process: stat, status, cmdline, cgroup, environ. */
function put(pid: number, o: { ppid: number; start: number; ticks?: number; state?: string; cmdline: string[] }): void {
  const d = join(procRoot, String(pid));
  mkdirSync(d, { recursive: true });
  const t = o.ticks ?? 0;
  writeFileSync(join(d, 'stat'), `${pid} (${o.cmdline[0]!.slice(0, 15)}) ${o.state ?? 'S'} ${o.ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 ${t} 0 0 0 20 0 1 0 ${o.start} 0 0\n`);
  writeFileSync(join(d, 'status'), `Name:\t${o.cmdline[0]}\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t${pid}\n`);
  writeFileSync(join(d, 'cmdline'), `${o.cmdline.join('\0')}\0`);
  writeFileSync(join(d, 'cgroup'), '0::/user.slice\n');
  writeFileSync(join(d, 'environ'), 'HOME=/home/ann\0');
}

function row(pid: number, ppid: number): GpuProcess {
  return { pid, gpuIndex: 0, gpuUuid: 'GPU-0', usedBytes: 1, kind: 'compute', name: 'python', host: { visible: true, ppid } } as unknown as GpuProcess;
}
const sample = (rows: GpuProcess[]): Sample => ({ timeMs: 0, source: { kind: 'nvml', detail: '' }, devices: [], processes: rows }) as unknown as Sample;

describe('readAncestors with the previous answer', () => {
  it('re-reads one stat file per launcher and returns the previous answer while nothing changed', () => {
    put(1, { ppid: 0, start: 1, cmdline: ['/sbin/init'] });
    put(100, { ppid: 1, start: 500, cmdline: ['torchrun', '--nproc-per-node', '2', 'train.py'] });
    put(101, { ppid: 100, start: 510, cmdline: ['python', 'train.py'] });
    const s = sample([row(101, 100)]);
    const first = readAncestors(s, proc);
    expect(Object.keys(first).map(Number).sort((a, b) => a - b)).toEqual([1, 100]);
    expect(first[100]!.cmdline).toEqual(['torchrun', '--nproc-per-node', '2', 'train.py']);
    expect(readAncestors(s, proc, first)).toBe(first);

    // The command line changes on disk but the start ticks do not: the stable facts are kept (as the enricher keeps them).
    put(100, { ppid: 1, start: 500, cmdline: ['something', 'else'] });
    expect(readAncestors(s, proc, first)).toBe(first);

    // CPU ticks and state move: a new answer with the new numbers, the stable facts carried over.
    put(100, { ppid: 1, start: 500, ticks: 42, state: 'R', cmdline: ['something', 'else'] });
    const moved = readAncestors(s, proc, first);
    expect(moved).not.toBe(first);
    expect(moved[100]).toMatchObject({ cpuTicks: 42, state: 'R', cmdline: ['torchrun', '--nproc-per-node', '2', 'train.py'] });
    expect(moved[1]).toBe(first[1]);

    // Another process under the same pid (other start ticks): everything read again.
    put(100, { ppid: 1, start: 900, cmdline: ['bash', 'run.sh'] });
    const reused = readAncestors(s, proc, moved);
    expect(reused[100]!.cmdline).toEqual(['bash', 'run.sh']);
    expect(reused[100]!.startTicks).toBe(900);
  });

  it('answers anew when a launcher comes or goes, and equals a fresh read each time', () => {
    put(1, { ppid: 0, start: 1, cmdline: ['/sbin/init'] });
    put(200, { ppid: 1, start: 600, cmdline: ['accelerate', 'launch'] });
    put(201, { ppid: 200, start: 610, cmdline: ['python'] });
    put(300, { ppid: 1, start: 700, cmdline: ['bash'] });
    put(301, { ppid: 300, start: 710, cmdline: ['python'] });
    const one = sample([row(201, 200)]);
    const two = sample([row(201, 200), row(301, 300)]);
    const a = readAncestors(one, proc);
    const b = readAncestors(two, proc, a);
    expect(b).not.toBe(a);
    expect(b).toEqual(readAncestors(two, proc));
    expect(b[200]).toBe(a[200]);
    const c = readAncestors(one, proc, b);
    expect(c).not.toBe(b);
    expect(Object.keys(c).map(Number).sort((x, y) => x - y)).toEqual([1, 200]);
    // A launcher that ended: gone from the answer, not kept from before.
    rmSync(join(procRoot, '200'), { recursive: true });
    const d = readAncestors(one, proc, c);
    expect(d[200]).toBeUndefined();
    expect(d).toEqual(readAncestors(one, proc));
  });

  it('refreshHostFacts reads everything when there is nothing to go on', () => {
    put(400, { ppid: 1, start: 800, cmdline: ['python', 'x.py'] });
    expect(refreshHostFacts(400, undefined, proc)).toEqual(readHostFacts(400, proc));
    const invisible = readHostFacts(999_999, proc);
    expect(invisible.visible).toBe(false);
    put(999_999, { ppid: 1, start: 5, cmdline: ['late'] });
    expect(refreshHostFacts(999_999, invisible, proc).cmdline).toEqual(['late']);
  });
});
