/**
 * A target that ends during the grace period while the kernel hands its pid to a new process: the outcome says
 * the target ended and that the pid's new owner was left alone. /proc is a folder of our own here, so the reuse
 * happens exactly when the test says; the pid is above the kernel's pid_max, so no real process is signalled.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { endProcesses } from '../../src/supervise/index.js';
import { tempDir } from './helpers/claims.js';

const PID = 4_194_304 + 17;
const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

/** /proc/PID/stat with `startTicks` as field 22 (the 20th after the command name). */
function writeStat(root: string, startTicks: number): void {
  const fields = ['S', '1', String(PID), String(PID), '0', '-1', '4194560', ...Array(12).fill('0'), String(startTicks), ...Array(30).fill('0')];
  mkdirSync(join(root, String(PID)), { recursive: true });
  writeFileSync(join(root, String(PID), 'stat'), `${PID} (python) ${fields.join(' ')}\n`);
}

it('says the pid went to another process when it was reused during the grace period', async () => {
  const tmp = tempDir('gpumem-reuse-');
  cleanups.push(tmp.remove);
  writeStat(tmp.dir, 1000);
  const ending = endProcesses([{ pid: PID, startTicks: 1000 }], { graceMs: 2000, pollMs: 20, procRoot: tmp.dir });
  setTimeout(() => writeStat(tmp.dir, 2000), 100);
  const [result] = await ending;
  expect(result).toEqual({ pid: PID, outcome: 'terminated', detail: `ended after SIGTERM; pid ${PID} already belongs to another process, which was left alone` });
});

it('says only that it ended when the pid is simply gone', async () => {
  const tmp = tempDir('gpumem-reuse-');
  cleanups.push(tmp.remove);
  writeStat(tmp.dir, 1000);
  const ending = endProcesses([{ pid: PID, startTicks: 1000 }], { graceMs: 2000, pollMs: 20, procRoot: tmp.dir });
  setTimeout(() => tmp.remove(), 100);
  const [result] = await ending;
  expect(result).toEqual({ pid: PID, outcome: 'terminated', detail: 'ended after SIGTERM' });
});
