/**
 * What doctor tells a tired engineer to type, checked against real processes on the fake driver: an idle
 * leftover whose launcher is gone, a detached job that computes (as `nohup` leaves it), and a stopped job.
 * A suggested command must select exactly the processes its finding names, and never the computing job.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { detached, endDetached, expectNoHang, expectNoStackTrace, gpumem, ppidOf, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-suggest-');
afterAll(() => {
  endDetached();
  tmp.remove();
});


interface Finding { id: string; severity: string; command?: string; fix: string; evidence: { pids: number[] } }

describe('doctor suggestions name exactly the processes of their finding', () => {
  it('idle leftover: `gpumem kill PID`; computing nohup job: no command; stopped job: reported as stopped', async () => {
    const idle = detached('exec sleep 61');
    const busy = detached(`exec ${process.execPath} -e "for (;;) {}"`);
    const stopped = detached('exec sleep 60');
    process.kill(stopped, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 300));
    for (const pid of [idle, busy, stopped]) expect(ppidOf(pid)).not.toBe(process.pid);
    const scenario = join(tmp.dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.44.01', cudaVersion: 13010,
      devices: [fakeH100(0, { processes: [idle, busy, stopped].map((pid) => ({ pid, usedBytes: 3 * 1024 ** 3, smUtilPct: 0 })) })],
    });
    const r = await gpumem(['doctor', '--json', '--window', '1.5'], { env: fakeNvmlEnv('590', scenario), timeoutMs: 20_000 });
    expectNoHang(r, 'doctor');
    expectNoStackTrace(r, 'doctor');
    const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
    const commands = findings.map((f) => f.command).filter((c): c is string => c !== undefined);
    // Every suggested command names pids, never a filter that could match more.
    for (const c of commands) expect(c).toMatch(/^gpumem kill \d+( \d+)*$/);
    for (const f of findings) if (f.command) for (const pid of f.command.split(' ').slice(2)) expect(f.evidence.pids).toContain(Number(pid));
    expect(commands.some((c) => c.split(' ').includes(String(busy)))).toBe(false);
    const orphan = findings.find((f) => f.id === 'orphans' && f.severity === 'warning');
    expect(orphan?.command).toBe(`gpumem kill ${idle}`);
    const detachedJob = findings.find((f) => f.id === 'orphans' && f.evidence.pids.includes(busy));
    expect(detachedJob?.severity).toBe('info');
    const stop = findings.find((f) => f.id === 'stopped');
    expect(stop?.evidence.pids).toEqual([stopped]);
    expect(stop?.fix).toContain(`kill -CONT ${stopped}`);
    expect(stop?.command).toBe(`gpumem kill ${stopped}`);
  }, 30_000);

  it('two copies of one command on a GPU: the suggestion names only the idle copies, never the computing one', async () => {
    // Same command line, different behaviour (chosen by the environment): the second copy computes.
    const script = `exec ${process.execPath} -e "if (process.env.GPUMEM_ADV_BUSY) for (;;) {} else setTimeout(() => {}, 60000)"`;
    const first = detached(script);
    const idleCopy = detached(script);
    const busyCopy = detached(`GPUMEM_ADV_BUSY=1 ${script}`);
    await new Promise((r) => setTimeout(r, 300));
    const scenario = join(tmp.dir, 'dup-scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.44.01', cudaVersion: 13010,
      devices: [fakeH100(0, { processes: [first, idleCopy, busyCopy].map((pid) => ({ pid, usedBytes: 2 * 1024 ** 3, smUtilPct: 0 })) })],
    });
    const r = await gpumem(['doctor', '--json', '--window', '1.5'], { env: fakeNvmlEnv('590', scenario), timeoutMs: 20_000 });
    expectNoHang(r, 'doctor');
    expectNoStackTrace(r, 'doctor');
    const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
    const dup = findings.find((f) => f.id === 'duplicate-instances');
    expect(dup?.evidence.pids).toEqual([first, idleCopy, busyCopy].sort((a, b) => a - b));
    // The computing copy does the work: the idle copies are the ones to end.
    expect(dup?.command).toBe(`gpumem kill ${[first, idleCopy].sort((a, b) => a - b).join(' ')}`);
    for (const f of findings) expect(f.command?.split(' ') ?? []).not.toContain(String(busyCopy));
  }, 30_000);
});
