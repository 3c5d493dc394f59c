/**
 * The benchmarks' sleeping GPU processes (bench/sleepers.ts) end with the benchmark: when it stops them, and
 * when it is killed without a chance to (SIGKILL), so no later measurement pays for thousands of strays.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { readProcStat } from '../../src/sources/index.js';
import { startSleepers } from '../../bench/sleepers.js';

const ROOT = `${__dirname}/../..`;
/** Running: /proc shows the pid in a state other than zombie. */
const running = (pid: number): boolean => {
  const state = readProcStat(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
};

async function until(done: () => boolean, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (done()) return true;
  return done();
}

describe('the benchmarks\' sleeping processes', () => {
  it('starts the number asked for, each a running sleep, and stop() ends them all', async () => {
    const s = await startSleepers(20);
    expect(s.pids).toHaveLength(20);
    expect(new Set(s.pids).size).toBe(20);
    for (const pid of s.pids) expect(readProcStat(pid)?.comm).toBe('sleep');
    expect(s.pids.every(running)).toBe(true);
    s.stop();
    s.stop();
    expect(await until(() => !s.pids.some(running))).toBe(true);
  });

  it('end when the process that started them is killed outright', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e',
      "import('./bench/sleepers.ts').then(async (m) => { const s = await m.startSleepers(10); console.log(JSON.stringify(s.pids)); setInterval(() => {}, 1000); })"],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let line = '';
      for await (const l of createInterface({ input: child.stdout })) {
        line = l;
        break;
      }
      const pids = JSON.parse(line) as number[];
      expect(pids).toHaveLength(10);
      expect(pids.every(running)).toBe(true);
      child.kill('SIGKILL');
      expect(await until(() => !pids.some(running))).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
