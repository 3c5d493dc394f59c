/**
 * CPU cost of `gpumem watch` as a person runs it (in a terminal: a tmux pane) with 8 GPUs × 64 processes
 * on the fake libnvidia-ml.so.1 (real pids of sleeping children), at 1 Hz and 10 Hz, beside `gpumem status
 * --watch` and, when they can be installed, nvitop and gpustat loading the same fake library through
 * LD_LIBRARY_PATH. CPU is the run time of every thread of the process (bench/proc-cpu.ts) over a measured span
 * after a warm-up, as a percentage of one core. The fake driver charges each call its H100 CPU time (bench/fake-costs.ts).
 * Each gpumem command runs as a person starts it: the executable, whose launcher line starts Node with the
 * flags that command gets (src/cli/bin.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFakeNvml, fakeH100, fakeNvmlLib, writeScenario, type FakeDevice } from '../test/fake-nvml/scenario.js';
import { MiB } from '../src/core/units.js';
import { requireRealCosts } from './fake-costs.js';
import { cpuSeconds } from './proc-cpu.js';
import { startSleepers, type Sleepers } from './sleepers.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
/** A throwaway virtual environment with nvitop and gpustat (see docs/watch.md); skipped when absent. */
const PEER_VENV = process.env.GPUMEM_BENCH_PEER_VENV ?? '/tmp/watch-bench-venv';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let measurements = 0;

/** Runs `argv` in a tmux pane (a real terminal) and returns % of one core over `measureMs` after `warmMs`. */
async function measure(argv: string[], env: Record<string, string>, warmMs: number, measureMs: number): Promise<number | string> {
  return (await measureTogether([argv], env, warmMs, measureMs))[0] as number | string;
}

/**
 * Runs each of `argvs` in a tmux pane of its own, all at once on the same fleet, and returns each one's % of one
 * core over the same `measureMs` after `warmMs`: two builds side by side, since single runs on a shared machine
 * move by more than the differences between builds.
 */
async function measureTogether(argvs: string[][], env: Record<string, string>, warmMs: number, measureMs: number): Promise<(number | string)[]> {
  // A socket per measurement: a server still shutting down from the previous row must not take the next one with it.
  const panes = argvs.map((argv) => {
    const socket = `gpumem-bench-watch-${process.pid}-${++measurements}`;
    const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
    tmux('new-session', '-d', '-s', 'b', '-x', '160', '-y', '50', `exec ${quoted}`);
    return { tmux, pid: Number(tmux('display-message', '-p', '-t', 'b', '#{pane_pid}').stdout.trim()) };
  });
  try {
    await sleep(warmMs);
    const before = panes.map(({ pid }) => (existsSync(`/proc/${pid}`) ? cpuSeconds(pid) : null));
    const started = performance.now();
    await sleep(measureMs);
    const seconds = (performance.now() - started) / 1000;
    return panes.map(({ tmux, pid }, i) => {
      const at = before[i];
      if (at === null || at === undefined || !existsSync(`/proc/${pid}`)) return `exited early: ${tmux('capture-pane', '-p', '-t', 'b').stdout.trim().split('\n').slice(-2).join(' ')}`;
      return ((cpuSeconds(pid) - at) / seconds) * 100;
    });
  } finally {
    for (const { tmux } of panes) tmux('kill-server');
  }
}

const pct = (v: number | string): string => (typeof v === 'number' ? `${v.toFixed(2)} %` : v);

export async function run(): Promise<void> {
  requireRealCosts();
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-watch-'));
  let sleepers: Sleepers | null = null;
  try {
    sleepers = await startSleepers(GPUS * PROCS_PER_GPU);
    const pids = sleepers.pids;
    // `step` > 0 changes utilisation and one process's memory on every GPU, as training does.
    const devicesAt = (step: number): FakeDevice[] => Array.from({ length: GPUS }, (_, g) =>
      fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: (PROCS_PER_GPU * 100 + step) * MiB },
        utilization: { gpuPct: (step * 7 + g) % 100, memoryPct: (step * 3) % 100 },
        processes: pids.slice(g * PROCS_PER_GPU, (g + 1) * PROCS_PER_GPU).map((pid, i) => ({ pid, usedBytes: (100 + (i === 0 ? step : 0)) * MiB, smUtilPct: (i + step) % 100 })),
      }),
    );
    const scenario = join(dir, 'scenario.txt');
    const writeAt = (step: number): void => writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices: devicesAt(step) });
    writeAt(0);
    let step = 0;
    const changing = async <T>(hz: number, body: () => Promise<T>): Promise<T> => {
      const timer = setInterval(() => writeAt(++step), 1000 / hz);
      try {
        return await body();
      } finally {
        clearInterval(timer);
        writeAt(0);
      }
    };
    const lib = fakeNvmlLib('590');
    const env = { GPUMEM_FAKE_NVML_SCENARIO: scenario, GPUMEM_NVML_LIB: lib, LD_LIBRARY_PATH: dirname(lib), PATH: process.env.PATH ?? '' };
    const spanMs = Number(process.env.GPUMEM_BENCH_WATCH_MS ?? 20_000);
    const loadAtStart = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const rows: Array<[string, number | string]> = [];
    const node = process.execPath;
    rows.push(['gpumem watch, 1 Hz', await measure([BIN, 'watch', '--interval', '1000'], env, 4000, spanMs)]);
    // A view kept open beside training: after the start-up (JIT compilation of the sampling, drawing and findings
    // code, V8 shrinking its heap), over a longer span because a tick is 0.01 s of CPU.
    const steadyWarmMs = Number(process.env.GPUMEM_BENCH_WATCH_STEADY_WARM_MS ?? 150_000);
    if (steadyWarmMs > 0) rows.push([`gpumem watch, 1 Hz, steady (after ${steadyWarmMs / 1000} s)`, await measure([BIN, 'watch', '--interval', '1000'], env, steadyWarmMs, 3 * spanMs)]);
    rows.push(['gpumem status --watch, 1 Hz', await measure([BIN, 'status', '--watch', '--interval', '1000'], env, 4000, spanMs)]);
    rows.push(['gpumem watch, 1 Hz, numbers changing each second', await changing(1, () => measure([BIN, 'watch', '--interval', '1000'], env, 4000, spanMs))]);
    // The same past its first minute and a half: V8 compiles the sampling, analysis and drawing code with its
    // optimising compiler for about a minute (tens of functions every 10 s, then a few), on threads of its own.
    const changingWarmMs = Number(process.env.GPUMEM_BENCH_WATCH_CHANGING_WARM_MS ?? 90_000);
    // GPUMEM_BENCH_WATCH_BASELINE=<another build's dist/cli/bin.js> measures that build's watch in the same run,
    // and this row with both builds at once on the same fleet.
    const baseline = process.env.GPUMEM_BENCH_WATCH_BASELINE;
    if (changingWarmMs > 0) {
      const name = `1 Hz, changing, steady (after ${changingWarmMs / 1000} s)`;
      const argvs = [[BIN, 'watch', '--interval', '1000'], ...(baseline ? [[baseline, 'watch', '--interval', '1000']] : [])];
      const [ours, theirs] = await changing(1, () => measureTogether(argvs, env, changingWarmMs, 3 * spanMs));
      rows.push([`gpumem watch, ${name}`, ours as number | string]);
      if (baseline) rows.push([`baseline watch, ${name}, side by side`, theirs as number | string]);
    }
    rows.push(['gpumem watch, 10 Hz', await measure([BIN, 'watch', '--interval', '100'], env, 4000, spanMs / 2)]);
    rows.push(['gpumem watch, 10 Hz, numbers changing 10×/s', await changing(10, () => measure([BIN, 'watch', '--interval', '100'], env, 4000, spanMs / 2))]);
    if (baseline) {
      rows.push(['baseline watch, 1 Hz', await measure([baseline, 'watch', '--interval', '1000'], env, 4000, spanMs)]);
      rows.push(['baseline watch, 10 Hz', await measure([baseline, 'watch', '--interval', '100'], env, 4000, spanMs / 2)]);
      rows.push(['baseline watch, 10 Hz, changing 10×/s', await changing(10, () => measure([baseline, 'watch', '--interval', '100'], env, 4000, spanMs / 2))]);
    }
    // The floor: an idle Node process whose only work is a timer at the same rate (what any Node tool pays).
    rows.push(['floor: idle node, 1 s timer', await measure([node, '-e', 'setInterval(() => {}, 1000)'], env, 2000, spanMs)]);
    rows.push(['floor: idle node, 100 ms timer', await measure([node, '-e', 'setInterval(() => {}, 100)'], env, 2000, spanMs / 2)]);
    rows.push(['gpumem status --watch, 10 Hz', await measure([BIN, 'status', '--watch', '--interval', '100'], env, 4000, spanMs / 2)]);
    const py = join(PEER_VENV, 'bin');
    if (existsSync(join(py, 'nvitop'))) rows.push(['nvitop, 1 Hz (--interval 1), changing', await changing(1, () => measure([join(py, 'nvitop'), '--interval', '1'], env, 6000, spanMs))]);
    else rows.push(['nvitop', `not installed in ${PEER_VENV}`]);
    if (existsSync(join(py, 'gpustat'))) rows.push(['gpustat, 1 Hz (-i 1 --show-pid --show-cmd)', await measure([join(py, 'gpustat'), '-i', '1', '--show-pid', '--show-cmd'], env, 6000, spanMs)]);
    else rows.push(['gpustat', `not installed in ${PEER_VENV}`]);
    rows.push(['nvtop', 'not measured: not available from the Debian packages on this machine']);
    const ours = rows.find(([name]) => name === 'gpumem watch, 1 Hz')?.[1];
    const status = rows.find(([name]) => name === 'gpumem status --watch, 1 Hz')?.[1];
    process.stdout.write(`fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids); CPU as % of one core, ${spanMs / 1000} s measured after a warm-up\n`);
    process.stdout.write(`load average at the start / end: ${loadAtStart} / ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
    for (const [name, value] of rows) process.stdout.write(`${name.padEnd(52)} ${pct(value)}\n`);
    if (typeof ours === 'number' && typeof status === 'number') process.stdout.write(`ratio watch / status --watch at 1 Hz: ${(ours / status).toFixed(2)}  (goal: watch ≤ 0.2 % at 1 Hz, ≤ 2 % at 10 Hz; the static rows skip unchanged samples, the changing rows cannot; the first 1 Hz row includes the start-up's JIT and GC work, the steady row does not)\n`);
  } finally {
    sleepers?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
