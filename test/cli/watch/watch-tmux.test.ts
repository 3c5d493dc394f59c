/**
 * `gpumem watch` as a person uses it: in tmux, on the fake NVML driver fed by real processes that hold
 * (claimed) GPU memory. The screen must show the scenario's numbers, sort, filter, survive a resize, end
 * the selected process from the UI and refuse one it cannot prove is a GPU process, and give the terminal
 * back on q and on SIGTERM.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, PROCS, alive, tempDir } from '../../supervise/helpers/claims.js';
import { startPump } from '../../supervise/helpers/pump.js';
import { rowOf, startTmux, type TmuxPane } from './tmux.js';

const BIN = fileURLToPath(new URL('../../../dist/cli/bin.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const children: ChildProcess[] = [];
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  cleanups.splice(0).forEach((f) => f());
});

async function holder(claimsDir: string, prefix: string, gpu: number, bytes: number): Promise<number> {
  const child = spawn(process.execPath, [join(PROCS, 'ignore-term.mjs'), '--claim', `${gpu}:${bytes}`], {
    env: { ...process.env, GPUMEM_TEST_CLAIMS: claimsDir, GPUMEM_TEST_DEVICE_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child.pid!;
}

const sane = (pane: TmuxPane): void => {
  expect(pane.format('#{alternate_on}')).toBe('0');
  expect(pane.format('#{cursor_flag}')).toBe('1');
};

describe.skipIf(!hasTmux)('gpumem watch in a terminal', () => {
  it('shows the numbers, sorts, filters, resizes, ends the selected process, refuses a look-alike, restores on q', async () => {
    const tmp = tempDir('gpumem-watch-');
    cleanups.push(tmp.remove);
    const prefix = join(realpathSync(tmp.dir), 'nvidia');
    const pump = startPump(tmp.dir, 2);
    cleanups.push(pump.stop);
    const small = await holder(tmp.dir, prefix, 0, 2 * GiB);
    const big = await holder(tmp.dir, prefix, 1, 5 * GiB);
    // NVML lists it, but it has no NVIDIA device open: a container's look-alike pid that must not be ended.
    const lookAlike = await holder(tmp.dir, '', 1, 1 * GiB);
    const env = { ...pump.env, GPUMEM_DEVICE_PREFIX: prefix, NO_COLOR: '1', PATH: process.env.PATH ?? '' };
    const pane = startTmux(`node ${BIN} watch --interval 200 --grace-ms 300; echo "exit=$?"; stty -a | grep -o -- '-\\?icanon'; sleep 30`, env, 120, 30);
    cleanups.push(pane.kill);

    let screen = await pane.waitFor((s) => rowOf(s, big) !== undefined && rowOf(s, small) !== undefined && rowOf(s, lookAlike) !== undefined, 'all three processes');
    expect(rowOf(screen, small)).toMatch(new RegExp(`^[> ]\\s*${small}\\s+\\S+\\s+0\\s+2\\.00 GiB\\s`));
    expect(rowOf(screen, big)).toMatch(new RegExp(`^[> ]\\s*${big}\\s+\\S+\\s+1\\s+5\\.00 GiB\\s`));
    // Device lines: GPU 0 holds exactly the small claim, GPU 1 the big one and the look-alike's.
    expect(screen).toMatch(/\[0\] NVIDIA H100[^\n]*\s2\.00 GiB\/79\.\d\d GiB/);
    expect(screen).toMatch(/\[1\] NVIDIA H100[^\n]*\s6\.00 GiB\/79\.\d\d GiB/);
    // Memory order: the 5 GiB row above the 2 GiB row; pid order puts the smaller pid first.
    const lineIndex = (s: string, pid: number): number => s.split('\n').findIndex((l) => l === rowOf(s, pid));
    expect(lineIndex(screen, big)).toBeLessThan(lineIndex(screen, small));
    pane.send('p');
    screen = await pane.waitFor((s) => s.includes('sort pid'), 'sort by pid');
    expect(lineIndex(screen, Math.min(small, big))).toBeLessThan(lineIndex(screen, Math.max(small, big)));

    pane.send('/', String(small), 'Enter');
    screen = await pane.waitFor((s) => s.includes(`filter "${small}"`), 'the filter');
    expect(rowOf(screen, small)).toBeDefined();
    expect(rowOf(screen, big)).toBeUndefined();

    pane.resize(80, 24);
    screen = await pane.waitFor((s) => s.split('\n').length <= 25 && /^\[0\] \[/m.test(s), 'compact mode at 80×24');
    for (const line of screen.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    expect(rowOf(screen, small)).toMatch(/2\.00 GiB/);

    pane.send('K');
    await pane.waitFor((s) => s.includes(`end pid ${small}?`), 'the kill confirmation');
    pane.send('y');
    screen = await pane.waitFor((s) => new RegExp(`pid ${small}: \\w+`).test(s), 'the kill outcome');
    expect(alive(small)).toBe(false);
    expect(alive(big)).toBe(true);

    // Wider again, so the whole refusal fits on the status line.
    pane.resize(200, 30);
    pane.send('/', 'Escape', '/', String(lookAlike), 'Enter');
    await pane.waitFor((s) => rowOf(s, lookAlike)?.startsWith('>') === true, 'the look-alike selected');
    pane.send('K', 'y');
    screen = await pane.waitFor((s) => s.includes(`refused pid ${lookAlike}`), 'the refusal');
    expect(screen).toMatch(/no NVIDIA device open/);
    expect(alive(lookAlike)).toBe(true);

    pane.send('q');
    screen = await pane.waitFor((s) => s.includes('exit=0') && /icanon/.test(s), 'the shell after q');
    sane(pane);
    expect(screen).toMatch(/^icanon$/m);
  }, 60_000);

  it('plays the bundled recording and gives the terminal back on SIGTERM', async () => {
    // At half speed the recording's 500 ms gaps are one sample a second, so it is still playing when SIGTERM
    // comes; stdin from the terminal, since a background job of a script reads /dev/null otherwise.
    // Wait for the stty line too: it is printed just after "exit=".
    const pane = startTmux(`node ${BIN} watch --replay ${EXAMPLE} --speed 0.5 < /dev/tty & pid=$!; sleep 2; kill -TERM $pid; wait $pid; echo "exit=$?"; stty -a | grep -o -- '-\\?icanon'; sleep 30`, { NO_COLOR: '1', PATH: process.env.PATH ?? '' }, 100, 30);
    cleanups.push(pane.kill);
    const screen = await pane.waitFor((s) => s.includes('exit=') && /icanon/.test(s), 'the shell after SIGTERM');
    expect(screen).not.toMatch(/No such process/);
    expect(screen).toMatch(/exit=0/);
    expect(screen).toMatch(/^icanon$/m);
    sane(pane);
  }, 20_000);
});
