/** Host facts read from real processes this test spawns: odd names, a zombie, an env var, a gone pid. */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/index.js';
import { createHostEnricher, childrenByParent, descendantsOf, NOT_READ_FOR_TABLE, readHostFacts, readProcTable, readStartTicks } from '../../../src/sources/procfs/index.js';

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'gpumem-procfs-'));
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(cmd, args, { stdio: 'ignore', env: { PATH: process.env.PATH, ...env } });
  children.push(child);
  return child;
}

async function until<T>(read: () => T | null | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = read();
    if (v !== null && v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const SLEEP = '/bin/sleep';

describe('readHostFacts on real processes', () => {
  it('a process whose name has spaces and parentheses, with CUDA env', async () => {
    const odd = join(dir, 'my (odd) name');
    copyFileSync(SLEEP, odd);
    const child = start(odd, ['30'], { CUDA_VISIBLE_DEVICES: '1,0', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
    const pid = child.pid!;
    const facts = await until(() => {
      const f = readHostFacts(pid);
      return f.exe === odd ? f : null;
    }, 'exec of the copied binary');
    expect(facts.visible).toBe(true);
    expect(facts.ppid).toBe(process.pid);
    expect(facts.cmdline).toEqual([odd, '30']);
    expect(facts.state).toMatch(/^[RS]$/);
    expect(facts.uid).toBe(process.getuid!());
    expect(facts.user).toBe(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(process.getuid!()))?.split(':')[0]);
    expect(facts.cudaEnv).toEqual({ CUDA_VISIBLE_DEVICES: '1,0', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
    expect(facts.nspid?.[facts.nspid.length - 1]).toBe(pid);
    // Started within the last minute (start time = btime + ticks / 100).
    expect(Math.abs(Date.now() - facts.startTimeMs!)).toBeLessThan(60_000);
    expect(readStartTicks(pid)).toBe(facts.startTicks);
    // comm in stat really holds the spaces and parens the parser must survive.
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain('(my (odd) name)');
  });

  it('a zombie keeps its row: state Z, command line null with the reason', async () => {
    // sh forks a short sleep, then becomes a long sleep, which never reaps it: the child stays a zombie.
    const parent = start('/bin/sh', ['-c', `${SLEEP} 0.01 & exec ${SLEEP} 30`]);
    const zombie = await until(() => {
      const kids = childrenByParent(readProcTable()).get(parent.pid!) ?? [];
      return kids.find((k) => readHostFacts(k).state === 'Z');
    }, 'a zombie child');
    const facts = readHostFacts(zombie);
    expect(facts.visible).toBe(true);
    expect(facts.ppid).toBe(parent.pid);
    expect(facts.cmdline).toBeNull();
    expect(facts.unavailable.cmdline).toMatch(/zombie/);
    expect(descendantsOf(readProcTable(), process.pid)).toEqual(expect.arrayContaining([parent.pid, zombie]));
  });

  it('a gone pid is marked not visible with every fact null and the reason', async () => {
    const child = start(SLEEP, ['30']);
    const pid = child.pid!;
    await until(() => readStartTicks(pid), 'child start');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await until(() => (readStartTicks(pid) === null ? true : null), 'reap');
    const facts = readHostFacts(pid);
    expect(facts.visible).toBe(false);
    expect(facts.uid).toBeNull();
    expect(facts.startTicks).toBeNull();
    expect(facts.unavailable.uid).toMatch(/not found in this PID namespace/);
  });
});

describe('prepared /proc trees', () => {
  const root = join(dir, 'proc');
  mkdirSync(join(root, '77'), { recursive: true });
  writeFileSync(join(root, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
  writeFileSync(join(root, '77', 'stat'), '77 (python) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 50000 0 0');
  writeFileSync(join(root, '77', 'status'), 'Name:\tpython\nUid:\t4321\t4321\t4321\t4321\nNSpid:\t77\n');
  writeFileSync(join(root, '77', 'cgroup'), `0::/system.slice/docker-${'c'.repeat(64)}.scope\n`);
  writeFileSync(join(root, '77', 'cmdline'), 'python\0train.py\0');
  writeFileSync(join(root, '77', 'environ'), '');
  writeFileSync(join(dir, 'passwd'), 'trainer:x:4321:4321::/home/t:/bin/sh\n');
  const options = { procRoot: root, passwdPath: join(dir, 'passwd') };

  it('computes start time from btime and ticks, reads container id and user', () => {
    const f = readHostFacts(77, options);
    expect(f.startTimeMs).toBe(1_700_000_000_000 + 500_000);
    expect(f.containerId).toBe('c'.repeat(64));
    expect([f.user, f.uid, f.state, f.ppid]).toEqual(['trainer', 4321, 'R', 1]);
    expect(f.exe).toBeNull();
    expect(f.unavailable.exe).toBe('process gone');
    expect(readHostFacts(77, { ...options, clockTicksPerSec: 250 }).startTimeMs).toBe(1_700_000_000_000 + 200_000);
  });

  it('the enricher keeps every row, marking host pids that are not visible here', () => {
    const sample: Sample = {
      timeMs: 1, source: { kind: 'smi', detail: 'x' }, devices: [], unavailable: {},
      processes: [77, 99999].map((pid) => ({
        pid, gpuUuid: 'GPU-x', gpuIndex: 0, gpuInstanceId: null, computeInstanceId: null, usedBytes: 1, kind: 'compute',
        name: null, smUtilPct: null, host: null, unavailable: {},
      })),
    };
    const enrich = createHostEnricher(options);
    const out = enrich(sample);
    expect(out.processes.map((p) => [p.pid, p.host?.visible, p.host?.user])).toEqual([[77, true, 'trainer'], [99999, false, null]]);
    // Second pass uses the cache for stable facts but re-reads state.
    writeFileSync(join(root, '77', 'stat'), '77 (python) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 50000 0 0');
    writeFileSync(join(root, '77', 'status'), 'Uid:\t1\t1\t1\t1\n');
    const again = enrich(sample).processes[0]!.host!;
    expect([again.state, again.uid]).toEqual(['S', 4321]);
    // A reused pid (new start ticks) is read afresh.
    writeFileSync(join(root, '77', 'stat'), '77 (python) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 60000 0 0');
    expect(enrich(sample).processes[0]!.host!.uid).toBe(1);
  });
});

describe('the status table reads only the facts it shows (tableFactsOnly)', () => {
  it('no environment and no executable path beside a command line; everything the table shows is the same', async () => {
    const child = start(SLEEP, ['31'], { CUDA_VISIBLE_DEVICES: '2', SLURM_JOB_ID: '77' });
    const pid = child.pid!;
    const full = await until(() => {
      const f = readHostFacts(pid);
      return f.cmdline?.[1] === '31' ? f : null;
    }, 'exec of sleep');
    expect(full.cudaEnv).toEqual({ CUDA_VISIBLE_DEVICES: '2' });
    const table = readHostFacts(pid, { tableFactsOnly: true });
    // State is left out: a process moves between R and S from one read to the next.
    for (const shown of ['visible', 'uid', 'user', 'cmdline', 'containerId', 'startTimeMs', 'startTicks', 'ppid', 'nspid'] as const) expect(table[shown], shown).toEqual(full[shown]);
    expect([table.cudaEnv, table.exe, table.job]).toEqual([null, null, null]);
    expect([table.unavailable.cudaEnv, table.unavailable.exe, table.unavailable.job]).toEqual([NOT_READ_FOR_TABLE, NOT_READ_FOR_TABLE, NOT_READ_FOR_TABLE]);
  });

  it('a process with an empty command line still gets its executable (the table shows it instead)', () => {
    // A /proc of our own: pid 4242 with an empty cmdline, an exe link and an environment.
    const root = join(dir, 'proc-table');
    mkdirSync(join(root, '4242'), { recursive: true });
    writeFileSync(join(root, 'stat'), 'cpu 1 2 3 4\nbtime 1700000000\n');
    const fields = ['S', '1', '4242', '4242', '0', '-1', '4194560', '0', '0', '0', '0', '5', '3', '0', '0', '20', '0', '1', '0', '12345', ...Array(32).fill('0')];
    writeFileSync(join(root, '4242', 'stat'), `4242 (worker) ${fields.join(' ')}\n`);
    writeFileSync(join(root, '4242', 'status'), `Name:\tworker\nUid:\t0\t0\t0\t0\nNSpid:\t4242\n`);
    writeFileSync(join(root, '4242', 'cmdline'), '');
    writeFileSync(join(root, '4242', 'cgroup'), '0::/\n');
    writeFileSync(join(root, '4242', 'environ'), 'CUDA_VISIBLE_DEVICES=3\0');
    symlinkSync('/opt/bin/worker', join(root, '4242', 'exe'));
    const full = readHostFacts(4242, { procRoot: root });
    const table = readHostFacts(4242, { procRoot: root, tableFactsOnly: true });
    expect(full.cudaEnv).toEqual({ CUDA_VISIBLE_DEVICES: '3' });
    expect([full.exe, table.exe]).toEqual(['/opt/bin/worker', '/opt/bin/worker']);
    expect(table.cudaEnv).toBeNull();
    expect(table.unavailable.cudaEnv).toBe(NOT_READ_FOR_TABLE);
    expect(table.startTimeMs).toBe(full.startTimeMs);
  });
});
