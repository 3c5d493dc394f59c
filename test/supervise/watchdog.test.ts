/**
 * The parent-death watchdog: which processes it picks (a prepared /proc), what it does at end-of-file (real
 * processes), and that its program, started by path, ends by itself once gpumem says goodbye.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importsIn } from '../helpers/imports.js';
import { BIN } from '../helpers/cli.js';
import { createWatchdogLoop } from '../../src/supervise/watchdog-loop.js';
import { startWatchdog } from '../../src/supervise/watchdog.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

interface FakeProc { pid: number; pgid: number; startTicks: number; state?: string; environ?: string[] }

function fakeProc(procs: readonly FakeProc[]): string {
  const root = join(mkdtempSync(join(tmpdir(), 'gpumem-watchdog-')), 'proc');
  cleanups.push(() => rmSync(join(root, '..'), { recursive: true, force: true }));
  for (const p of procs) {
    mkdirSync(join(root, String(p.pid)), { recursive: true });
    const rest = [1, p.pgid, p.pgid, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 1, 0, p.startTicks, 0];
    writeFileSync(join(root, String(p.pid), 'stat'), `${p.pid} (a) b) ${p.state ?? 'S'} ${rest.join(' ')}\n`);
    writeFileSync(join(root, String(p.pid), 'environ'), (p.environ ?? ['PATH=/bin']).join('\0'));
  }
  return root;
}

/** A process that sleeps until signalled, with `env`. */
function sleeper(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}

const MARK = 'GPUMEM_RUN_MARK=test-run';

describe('watchdog', () => {
  it('picks marked processes and group members started no earlier than the leader, never itself or a zombie', () => {
    const procRoot = fakeProc([
      { pid: 10, pgid: 10, startTicks: 100 },
      { pid: 11, pgid: 10, startTicks: 90 }, // in the group's id but older than its leader: a recycled id
      { pid: 12, pgid: 10, startTicks: 150 },
      { pid: 13, pgid: 99, startTicks: 50, environ: ['A=1', MARK] },
      { pid: 14, pgid: 99, startTicks: 50, environ: [`${MARK}x`] },
      { pid: 15, pgid: 10, startTicks: 160, state: 'Z' },
      { pid: 16, pgid: 10, startTicks: 170, environ: [MARK] },
    ]);
    const loop = createWatchdogLoop({ marker: MARK, graceMs: 0, selfPid: 16, procRoot });
    expect(loop.targets().map((t) => t.pid)).toEqual([13]);
    loop.feed('group 10 1');
    loop.feed('00\nended 7\n');
    expect(loop.targets().map((t) => t.pid).sort()).toEqual([10, 12, 13]);
    loop.feed('ended 10\n');
    expect(loop.targets().map((t) => t.pid)).toEqual([13]);
  });

  it('at end-of-file without goodbye it ends the marked processes; after goodbye it touches nothing', async () => {
    const marked = sleeper({ GPUMEM_RUN_MARK: 'test-run' });
    const other = sleeper({ GPUMEM_RUN_MARK: 'another-run' });
    await until(() => readFileSync(`/proc/${marked.pid}/environ`, 'latin1').includes(MARK), 5000);
    const spared = createWatchdogLoop({ marker: MARK, graceMs: 1000, selfPid: process.pid });
    spared.feed('bye\n');
    await spared.end();
    expect(alive(marked.pid as number)).toBe(true);
    const loop = createWatchdogLoop({ marker: MARK, graceMs: 5000, selfPid: process.pid });
    const gone = new Promise((r) => marked.once('exit', (_code, signal) => r(signal)));
    await loop.end();
    expect(await gone).toBe('SIGTERM');
    expect(alive(other.pid as number)).toBe(true);
  });

  it('kills what ignores TERM once the grace is over', async () => {
    const stubborn = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setTimeout(() => {}, 60000)"], { env: { PATH: process.env.PATH ?? '', GPUMEM_RUN_MARK: 'test-run' }, stdio: 'ignore' });
    cleanups.push(() => stubborn.kill('SIGKILL'));
    await until(() => readFileSync(`/proc/${stubborn.pid}/environ`, 'latin1').includes(MARK), 5000);
    await new Promise((r) => setTimeout(r, 300));
    const gone = new Promise((r) => stubborn.once('exit', (_code, signal) => r(signal)));
    await createWatchdogLoop({ marker: MARK, graceMs: 300, selfPid: process.pid }).end();
    expect(await gone).toBe('SIGKILL');
  });

  it('runs as its own program in its own session, and ends by itself after goodbye', async () => {
    const dog = startWatchdog(MARK, 500, { PATH: process.env.PATH });
    const pid = dog.pid as number;
    expect(pid).toBeGreaterThan(0);
    await until(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('watchdog-main'), 5000);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(cmdline).toContain('--inspect-port=192.0.2.1:9229');
    expect(cmdline.slice(-2)).toEqual([MARK, '500']);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(Number(fields[3])).toBe(pid); // session id: its own
    expect(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')).not.toContain(MARK);
    dog.release();
    await until(() => !alive(pid), 10000);
    expect(alive(pid)).toBe(false);
  });

  it('loads only the signal guard, its loop and the /proc stat reader, so it runs before the command starts', () => {
    const dist = resolve(dirname(BIN), '..');
    const loaded = new Set<string>();
    const stack = [join(dist, 'supervise/watchdog-main.js')];
    while (stack.length > 0) {
      const file = stack.pop() as string;
      if (loaded.has(file)) continue;
      loaded.add(file);
      for (const spec of importsIn(readFileSync(file, 'utf8'))) if (spec.startsWith('.')) stack.push(resolve(dirname(file), spec));
    }
    expect([...loaded].map((f) => relative(dist, f)).sort()).toEqual([
      'sources/procfs/parse.js', 'sources/procfs/stat.js', 'supervise/signal-guard.js', 'supervise/watchdog-loop.js', 'supervise/watchdog-main.js',
    ]);
  });
});
