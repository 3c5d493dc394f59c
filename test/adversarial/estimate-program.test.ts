/**
 * `estimate -- python …` with programs that misbehave outside the traced step: a detached (setsid) helper
 * that keeps stderr open after the program exited, or while the program hangs past --trace-timeout, must
 * neither keep gpumem waiting nor survive it; a missing or non-executable interpreter exits 127 / 126 with
 * one clear line, as a shell would.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-estimate-');
const helpers: number[] = [];
afterAll(() => {
  for (const pid of helpers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already ended, as it should be.
    }
  }
  tmp.remove();
});

/** Running, not a zombie waiting for init to reap it. */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
};

/** A program that forks a setsid helper (holding stderr, its pid written to NAME.pid), then exits or hangs. */
function script(name: string, then: 'exit' | 'hang'): string {
  const path = join(tmp.dir, name);
  const pidFile = `${path}.pid`;
  writeFileSync(path, [
    'import os, sys, time',
    'if os.fork() == 0:',
    '    os.setsid()',
    `    open(${JSON.stringify(pidFile)}, "w").write(str(os.getpid()))`,
    '    time.sleep(90)',
    '    sys.exit(0)',
    'time.sleep(0.3)',
    then === 'exit' ? 'sys.exit(0)' : 'time.sleep(90)',
    '',
  ].join('\n'));
  return path;
}

const helperOf = (path: string): number => (existsSync(`${path}.pid`) ? Number(readFileSync(`${path}.pid`, 'utf8')) : 0);

describe('estimate -- CMD: programs that leave helpers or cannot start', () => {
  it('a setsid helper holding stderr after the program exited: gpumem does not wait for it, and ends it', async () => {
    const path = script('exits.py', 'exit');
    const r = await gpumem(['estimate', '--trace-timeout', '20', '--', 'python3', path], { timeoutMs: 15_000 });
    expectNoHang(r, 'estimate with a detached helper');
    expectNoStackTrace(r, 'estimate with a detached helper');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the program ended without importing torch/);
    const helper = helperOf(path);
    expect(helper).toBeGreaterThan(0);
    helpers.push(helper);
    if (alive(helper)) throw new Error(`ESCAPE: the detached helper ${helper} outlived gpumem`);
  }, 20_000);

  it('a hanging program with a setsid helper: ends at --trace-timeout, helper included', async () => {
    const path = script('hangs.py', 'hang');
    const r = await gpumem(['estimate', '--trace-timeout', '3', '--', 'python3', path], { timeoutMs: 15_000 });
    expectNoHang(r, 'estimate past --trace-timeout');
    expectNoStackTrace(r, 'estimate past --trace-timeout');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/did not finish \d+ training step\(s\) within 3 s/);
    const helper = helperOf(path);
    expect(helper).toBeGreaterThan(0);
    helpers.push(helper);
    if (alive(helper)) throw new Error(`ESCAPE: the detached helper ${helper} outlived gpumem`);
  }, 20_000);

  it('a missing interpreter exits 127 and a non-executable one 126, each with one line', async () => {
    const missing = await gpumem(['estimate', '--', 'nonexistent-python-xyz', 'train.py']);
    expectNoStackTrace(missing, 'missing interpreter');
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/^gpumem: error: nonexistent-python-xyz: command not found$/m);
    const notExec = await gpumem(['estimate', '--', '/etc/passwd', 'train.py']);
    expectNoStackTrace(notExec, 'non-executable interpreter');
    expect(notExec.code).toBe(126);
    expect(notExec.stderr).toMatch(/^gpumem: error: \/etc\/passwd: cannot be executed \(EACCES\)$/m);
  });
});
