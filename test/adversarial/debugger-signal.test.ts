/**
 * SIGUSR1 must never open Node's debugger in a gpumem process: an inspector on 127.0.0.1:9229 has no
 * authentication, so any local user could run code as gpumem's user. Every long-lived gpumem process (the
 * supervisor of `run`, its watchdog, `serve`, `watch`, a looping `status --watch`) is signalled early (from the
 * first milliseconds after exec, through Node's own start-up) and late (running), and must then hold no
 * listening socket it did not open itself and print no "Debugger listening". `run` passes SIGUSR1/SIGUSR2 on to
 * its command. The last test proves the socket check finds an inspector where one opens.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep, until, world, type World } from './supervise-helpers.js';

// GPUMEM_TEST_BIN runs the cases against another build (to show they fail on one without the guard).
const BIN = process.env.GPUMEM_TEST_BIN ?? resolve(__dirname, '../../dist/cli/bin.js');
/** What the launcher starts Node on: the CommonJS copy the build writes beside bin.js, when there is one. */
const STARTED = existsSync(BIN.replace(/\.js$/, '.cjs')) ? BIN.replace(/\.js$/, '.cjs') : BIN;
const EXAMPLE = resolve(__dirname, '../../examples/doctor-example.ndjson');

/** TCP ports `pid` listens on (IPv4 and IPv6), from its socket inodes and /proc/net/tcp*. */
function listeningPorts(pid: number): number[] {
  let inodes: Set<string>;
  try {
    inodes = new Set(readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '';
      } catch {
        return '';
      }
    }).filter(Boolean));
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      // Columns: sl local rem st … inode (10th); state 0A is LISTEN.
      if (f[3] === '0A' && inodes.has(f[9] ?? '')) ports.push(parseInt((f[1] ?? '').split(':')[1] ?? '0', 16));
    }
  }
  return ports;
}

function aliveNotZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function descendantsOf(pid: number): number[] {
  const out = childrenOf(pid);
  for (let i = 0; i < out.length; i++) out.push(...childrenOf(out[i] as number));
  return out;
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

interface Proc {
  child: ChildProcess;
  stderr: () => string;
  /** stdout and stderr. */
  output: () => string;
  stop(): Promise<void>;
}

/** Starts the executable itself (its launcher line included), as a user's shell or `npx gpumem` would. */
function start(args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(BIN, args, { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', GPUMEM_NVML_LIB: '/nonexistent/libnvidia-ml.so.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let out = '';
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  return {
    child,
    stderr: () => err,
    output: () => out + err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
    },
  };
}

/** The debugger check: nothing listening beyond `own`, and no inspector announced. */
function expectNoInspector(pid: number, stderr: string, own: number[], what: string): void {
  const extra = listeningPorts(pid).filter((p) => !own.includes(p));
  if (extra.length > 0 || /Debugger listening/.test(stderr)) {
    throw new Error(`ESCAPE: ${what}: after SIGUSR1 it listens on ${extra.join(', ') || '(none)'}; stderr: ${stderr.slice(0, 300)}`);
  }
}

const running: Proc[] = [];
let w: World | null = null;
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
  w?.remove();
  w = null;
});

const EARLY_MS = [0, 3, 10, 25, 45, 80, 150];

/** Whether `pid` has a handler installed for SIGUSR1 (signal 10: bit 9 of SigCgt in /proc/PID/status). */
function catchesUsr1(pid: number): boolean {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & (1n << 9n)) !== 0n;
  } catch {
    return false;
  }
}

describe('SIGUSR1 never opens a debugger', () => {
  it('serve, signalled from its first milliseconds on and again once it answers: only its own port listens', async () => {
    for (const delay of EARLY_MS) {
      const p = start(['serve', '--replay', EXAMPLE, '--port', '0', '--readonly']);
      running.push(p);
      await sleep(delay);
      p.child.kill('SIGUSR1');
      await until(() => /gpumem serve: http:\/\/127\.0\.0\.1:\d+/.test(p.output()) || p.child.exitCode !== null || p.child.signalCode !== null, 10000);
      const pid = p.child.pid as number;
      // Killed by the signal before any handler existed (the first instant after exec) is not an inspector.
      if (p.child.signalCode === 'SIGUSR1') continue;
      const own = Number(/127\.0\.0\.1:(\d+)/.exec(p.output())?.[1]);
      expect(own).toBeGreaterThan(0);
      p.child.kill('SIGUSR1');
      p.child.kill('SIGUSR2');
      await sleep(300);
      expect(aliveNotZombie(pid)).toBe(true);
      expectNoInspector(pid, p.stderr(), [own], `serve signalled ${delay} ms after exec`);
      await p.stop();
    }
  }, 60000);

  it('status --watch (a command without a child) ignores SIGUSR1 and SIGUSR2 and keeps going', async () => {
    // The fake driver, not a recording: a recording's end would end the loop during the test.
    w = world();
    const p = start(['status', '--watch', '--interval', '100'], w.env);
    running.push(p);
    await sleep(700);
    for (const sig of ['SIGUSR1', 'SIGUSR2', 'SIGUSR1'] as const) p.child.kill(sig);
    await sleep(400);
    expect(aliveNotZombie(p.child.pid as number)).toBe(true);
    expectNoInspector(p.child.pid as number, p.stderr(), [], 'status --watch');
  });

  it('watch in a terminal, early and late', async () => {
    // The fake driver, not a recording: a recording ends, and watch with it.
    w = world();
    for (const delay of [5, 40, 900]) {
      // A pseudo-terminal from Python's pty module: watch refuses to draw anywhere else.
      const py = spawn('python3', ['-c', 'import pty,sys; st=pty.spawn(sys.argv[1:]); sys.stderr.write("wait status %d\\n" % st)', BIN, 'watch'], {
        env: { ...w.env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'],
      });
      let screen = '';
      py.stdout.on('data', (d: Buffer) => (screen += d.toString()));
      py.stderr.on('data', (d: Buffer) => (screen += d.toString()));
      // gpumem's Node process under the pseudo-terminal. Searched among all descendants, by its executable:
      // `python3` may be a launcher (pyenv's shim forks the real Python), and Python's own command line
      // contains "watch" too, so the first child with that word can be Python, which SIGUSR1 ends.
      const isWatch = (c: number): boolean => {
        try {
          return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('\0watch') && /^node/.test(basename(readlinkSync(`/proc/${c}/exe`)));
        } catch {
          return false;
        }
      };
      await until(() => descendantsOf(py.pid as number).some(isWatch), 5000);
      const pid = descendantsOf(py.pid as number).find(isWatch) as number;
      // Late means drawing: its first screen is up.
      if (delay >= 900) await until(() => /util/.test(screen), 10000);
      await sleep(delay);
      try {
        process.kill(pid, 'SIGUSR1');
      } catch {
        // Already gone.
      }
      await sleep(delay < 100 ? 1200 : 300);
      const died = !aliveNotZombie(pid);
      // Only a signal in the first instant after exec may end it (no handler of any kind yet).
      if (delay >= 900) expect(died, `watch ended after a late SIGUSR1; screen: ${screen.slice(-300)}`).toBe(false);
      if (!died) {
        process.kill(pid, 'SIGUSR1');
        await sleep(300);
        expect(aliveNotZombie(pid)).toBe(true);
        expectNoInspector(pid, screen, [], `watch signalled ${delay} ms after start`);
      }
      const tree = descendantsOf(py.pid as number);
      py.kill('SIGKILL');
      for (const c of tree) {
        try {
          process.kill(c, 'SIGKILL');
        } catch {
          // Gone with its terminal.
        }
      }
    }
  }, 30000);

  it('run: the supervisor and its watchdog open nothing, and the command receives SIGUSR1 and SIGUSR2', async () => {
    w = world();
    const got = join(w.dir, 'got');
    // The command traps both signals, notes each in a file, and ends once SIGUSR2 came. The early SIGUSR1 below
    // may reach it too: Node delivers a signal to JavaScript between tasks, and when start-up runs through to
    // the command's start in one go, the forwarding listener is in place by then.
    const script = `trap 'echo USR1 >> "${got}"' USR1; trap 'echo USR2 >> "${got}"' USR2; until grep -q USR2 "${got}" 2>/dev/null; do sleep 0.05; done`;
    const p = start(['run', '--no-history', '--no-companion', '--', 'sh', '-c', script], w.env);
    running.push(p);
    // Early: before the command exists, as soon as the process has a handler for SIGUSR1 (Node's own, or
    // gpumem's guard): before that, in the launcher's shell or the first instant after exec, the default action
    // ends it, which opens nothing (docs/guarantees.md) and is not what this case is about.
    await until(() => catchesUsr1(p.child.pid as number), 5000);
    p.child.kill('SIGUSR1');
    await until(() => /received SIGUSR1|env GPUMEM_RUN_MARK/.test(p.stderr()), 10000);
    const pid = p.child.pid as number;
    expect(p.child.signalCode).toBeNull();
    const isWatchdog = (c: number): boolean => {
      try {
        return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('GPUMEM_RUN_MARK=');
      } catch {
        return false;
      }
    };
    // The marker is logged just before the watchdog starts: under load it can take a moment to appear.
    await until(() => childrenOf(pid).some(isWatchdog), 5000);
    const watchdog = childrenOf(pid).find(isWatchdog);
    expect(watchdog).toBeDefined();
    await until(() => /sh\0-c/.test(childrenOf(pid).map((c) => { try { return readFileSync(`/proc/${c}/cmdline`, 'utf8'); } catch { return ''; } }).join('|')), 10000);
    await sleep(200);
    process.kill(watchdog as number, 'SIGUSR1');
    process.kill(watchdog as number, 'SIGUSR2');
    p.child.kill('SIGUSR1');
    await until(() => existsSync(got), 5000);
    await sleep(150);
    p.child.kill('SIGUSR2');
    await new Promise<void>((r) => p.child.on('close', () => r()));
    const noted = readFileSync(got, 'utf8').split('\n').filter(Boolean);
    expect([...new Set(noted)].sort()).toEqual(['USR1', 'USR2']);
    expect(noted.filter((n) => n === 'USR1').length).toBeLessThanOrEqual(2);
    expect(p.child.exitCode).toBe(0);
    expect(p.stderr()).toMatch(/received SIGUSR1; passed it on to the command \(pid \d+\)/);
    expect(p.stderr()).not.toMatch(/Debugger listening|\n\s+at /);
    expect(aliveNotZombie(watchdog as number)).toBe(false);
  }, 30000);

  it('the check finds an inspector where one opens: plain Node signalled late listens', async () => {
    const child = spawn(process.execPath, ['--inspect-port=127.0.0.1:0', '-e', 'setTimeout(() => {}, 5000)'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await sleep(400);
    child.kill('SIGUSR1');
    await until(() => listeningPorts(child.pid as number).length > 0, 5000);
    expect(() => expectNoInspector(child.pid as number, err, [], 'plain node')).toThrow(/ESCAPE/);
    child.kill('SIGKILL');
  });

  it('the launcher line is what the shell runs: the executable starts Node with the inspector aimed nowhere', () => {
    const r = spawnSync(BIN, ['--version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const launcher = readFileSync(BIN, 'utf8').split('\n')[1] as string;
    expect(launcher.startsWith('//bin/true; ')).toBe(true);
    // Every way the shell may start Node aims the inspector nowhere.
    const starts = launcher.match(/exec node [^"]*"\$f" "\$@"/g) ?? [];
    expect(starts).toHaveLength(3);
    for (const start of starts) expect(start).toMatch(/--inspect-port=192\.0\.2\.1:9229 "\$f" "\$@"$/);
  });

  it('the shell picks the flags by command: watch a larger interrupt budget, the other long-running ones the one-thread collector only', () => {
    // A stand-in `node` first on PATH prints what the shell would have started.
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-launcher-'));
    try {
      writeFileSync(join(dir, 'node'), '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
      const started = (...args: string[]): string => {
        const r = spawnSync('sh', [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` } });
        return r.stdout.trim();
      };
      const inspector = '--inspect-port=192.0.2.1:9229';
      expect(started('watch', '--interval', '1000')).toBe(`--single-threaded-gc --interrupt-budget=540672 ${inspector} ${STARTED} watch --interval 1000`);
      for (const command of ['record', 'serve', 'status', 'run', 'pipeline']) expect(started(command, '-x')).toBe(`--single-threaded-gc ${inspector} ${STARTED} ${command} -x`);
      expect(started('explain', '-')).toBe(`${inspector} ${STARTED} explain -`);
      expect(started()).toBe(`${inspector} ${STARTED}`);
      // Through a link, as npm installs the command: the file beside the real one, not beside the link.
      symlinkSync(BIN, join(dir, 'gpumem'));
      const linked = spawnSync('sh', [join(dir, 'gpumem'), 'status'], { encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` } });
      expect(linked.stdout.trim()).toBe(`--single-threaded-gc ${inspector} ${STARTED} status`);
      // Without readlink (only the stand-in on PATH): Node is started on the link, which runs bin.js itself.
      const bare = spawnSync('/bin/sh', [join(dir, 'gpumem'), 'status'], { encoding: 'utf8', env: { PATH: dir } });
      expect(bare.stdout.trim()).toBe(`--single-threaded-gc ${inspector} ${join(dir, 'gpumem')} status`);
      expect(bare.stderr).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a long-running command started through the executable runs with the garbage collector on the main thread; a one-off analysis does not', async () => {
    const cmdline = async (args: string[]): Promise<string> => {
      // stdin left open: a command that reads it waits there, so its command line can be read.
      const child = spawn(BIN, args, { stdio: ['pipe', 'ignore', 'ignore'] });
      try {
        let text = '';
        await until(() => {
          try {
            text = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').join(' ');
          } catch {
            return false;
          }
          // The shell runs first under the same pid, then execs Node.
          return text.startsWith('node ');
        }, 5000);
        return text;
      } finally {
        child.kill('SIGKILL');
      }
    };
    const serve = await cmdline(['serve', '--port', '0', '--replay', EXAMPLE]);
    expect(serve).toMatch(/^node --single-threaded-gc --inspect-port=192\.0\.2\.1:9229 \S*bin\.c?js serve /);
    const explain = await cmdline(['explain', '-']);
    expect(explain).not.toContain('--single-threaded-gc');
  });
});
