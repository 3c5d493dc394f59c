/**
 * What sampling costs each consumer, against the targets: at 8 GPUs × 64 processes (real sleeping pids, each
 * with an SM share) on the fake driver charging the H100's per-call CPU time, every live command runs as a
 * person runs it (watch in a tmux pane) at 1 Hz — serve with no page open and no scrape at its idle pace, run
 * at its default 10 Hz — and this prints per command: NVML calls per sample by function (from the fake's
 * GPUMEM_FAKE_NVML_CALLS_LOG, between two sample boundaries inside the measured span, start-up excluded), the
 * driver's CPU those calls cost by the table, and the process's CPU as % of one core (every thread's run time,
 * bench/proc-cpu.ts) over the span, beside an idle Node process's with the same 1-s timer (the floor of any
 * 1-Hz command) and a Node process making a steady sample's NVML calls at 1 Hz (bench/nvml-floor.mjs: what any Node
 * tool pays before doing anything with the answers); the steady rows measure watch, record and serve past their first 90 s. The one-shot
 * commands' calls come from bench/fake-costs.ts's injected-clock run.
 * Each gpumem command runs as a person starts it: the executable, whose launcher line starts Node with the
 * flags that command gets (src/cli/bin.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeNvmlLib } from '../test/fake-nvml/scenario.js';
import { describeCallsPerSample } from './fake-costs.js';
import { startFleet } from './fleet.js';
import { cpuSeconds } from './proc-cpu.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const NVML_FLOOR = fileURLToPath(new URL('./nvml-floor.mjs', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));


interface LogLine {
  tMs: number;
  calls: Record<string, { count: number; costNs: number }>;
}

interface Consumer {
  name: string;
  argv: string[];
  /** Target CPU as % of one core, or null where the issue sets none. */
  targetPct: number | null;
  /** Needs a terminal (a tmux pane). */
  tty?: boolean;
  warmMs: number;
  /** Measured span as a multiple of the default. */
  spanTimes?: number;
  /** Not gpumem: a Node process doing nothing but the same 1-s timer (no driver calls to count). */
  floor?: boolean;
  /** Not gpumem: a Node process making a steady sample's NVML calls at 1 Hz and nothing else (bench/nvml-floor.mjs). */
  nvmlFloor?: boolean;
}

interface Measured {
  cpuPct: number;
  samples: number;
  /** Calls per sample by function, all GPUs together. */
  perSample: Record<string, number>;
  /** Driver CPU per sample by the table, ms, all GPUs. */
  driverMsPerSample: number;
  /** Driver CPU per second of the span, as % of one core. */
  driverPct: number;
  spanMs: number;
}

/** Runs one consumer and measures it over `spanMs` after its warm-up. */
async function measure(c: Consumer, env: Record<string, string>, dir: string, spanMs: number, n: number): Promise<Measured | string> {
  const log = join(dir, `calls-${n}.ndjson`);
  writeFileSync(log, '');
  const fullEnv = { ...env, GPUMEM_FAKE_NVML_CALLS_LOG: log };
  let pid: number;
  let stop: () => void;
  if (c.tty) {
    const socket = `gpumem-bench-sampling-${process.pid}-${n}`;
    const quoted = c.argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, ...fullEnv } });
    tmux('new-session', '-d', '-s', 'b', '-x', '160', '-y', '50', `exec ${quoted}`);
    pid = Number(tmux('display-message', '-p', '-t', 'b', '#{pane_pid}').stdout.trim());
    stop = () => void tmux('kill-server');
  } else {
    const child = spawn(c.argv[0] as string, c.argv.slice(1), { env: { ...process.env, ...fullEnv }, stdio: 'ignore', cwd: dir });
    pid = child.pid as number;
    stop = () => void child.kill('SIGINT');
  }
  try {
    await sleep(c.warmMs);
    if (!existsSync(`/proc/${pid}`)) return 'exited early';
    const fromMs = Date.now();
    const before = cpuSeconds(pid);
    await sleep(spanMs);
    const used = cpuSeconds(pid) - before;
    const toMs = Date.now();
    if (c.floor) return { cpuPct: (used / ((toMs - fromMs) / 1000)) * 100, samples: 0, perSample: {}, driverMsPerSample: 0, driverPct: 0, spanMs: toMs - fromMs };
    const lines = readFileSync(log, 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine).filter((l) => l.tMs >= fromMs && l.tMs <= toMs);
    if (lines.length < 2) return `fewer than two sample boundaries in ${spanMs / 1000} s`;
    const [a, b] = [lines[0] as LogLine, lines[lines.length - 1] as LogLine];
    const samples = lines.length - 1;
    const perSample: Record<string, number> = {};
    let driverNs = 0;
    for (const [fn, call] of Object.entries(b.calls)) {
      const count = call.count - (a.calls[fn]?.count ?? 0);
      if (count === 0) continue;
      perSample[fn] = count / samples;
      driverNs += count * call.costNs;
    }
    const coveredMs = b.tMs - a.tMs;
    return { cpuPct: (used / ((toMs - fromMs) / 1000)) * 100, samples, perSample, driverMsPerSample: driverNs / 1e6 / samples, driverPct: (driverNs / 1e6 / coveredMs) * 100, spanMs: toMs - fromMs };
  } finally {
    stop();
    await sleep(300);
  }
}

const short = (fn: string): string => fn.replace(/^nvmlDeviceGet/, '');

export async function run(): Promise<void> {
  const fleet = await startFleet('sampling', GPUS, PROCS_PER_GPU, (i) => (i * 7) % 100);
  try {
    const lib = fakeNvmlLib('590');
    const env = { GPUMEM_FAKE_NVML_SCENARIO: fleet.scenario, GPUMEM_NVML_LIB: lib, LD_LIBRARY_PATH: dirname(lib), GPUMEM_FAKE_NVML_COSTS: process.env.GPUMEM_FAKE_NVML_COSTS ?? 'h100', HOME: fleet.dir, PATH: process.env.PATH ?? '' };
    const spanMs = Number(process.env.GPUMEM_BENCH_SAMPLING_MS ?? 30_000);
    const node = process.execPath;
    const steadyWarmMs = Number(process.env.GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS ?? 90_000);
    const consumers: Consumer[] = [
      // What any Node process waking once a second costs: part of every 1-Hz row, and no gpumem work.
      { name: 'floor: idle node, 1 s timer', argv: [node, '-e', 'setInterval(() => {}, 1000)'], targetPct: null, warmMs: 5000, spanTimes: 2, floor: true },
      // What any Node tool pays to make a steady sample's NVML calls once a second through koffi, answers unused.
      { name: 'floor: NVML calls, 1 Hz', argv: [node, NVML_FLOOR], targetPct: null, warmMs: 30_000, spanTimes: 2, nvmlFloor: true },
      { name: 'watch, 1 Hz', argv: [BIN, 'watch', '--interval', '1000'], targetPct: 0.2, tty: true, warmMs: 8000 },
      { name: 'record, 1 Hz', argv: [BIN, 'record', '--out', join(fleet.dir, 'rec.ndjson'), '--interval', '1000'], targetPct: 0.2, warmMs: 5000 },
      { name: 'serve, no page, no scrape', argv: [BIN, 'serve', '--port', '0', '--db', join(fleet.dir, 'runs.db')], targetPct: 0.1, warmMs: 12_000, spanTimes: 4 },
      // The same three as they run for hours: past V8's first minute and a half of optimising compilation and heap
      // shrinking, which happen once (GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS=0 leaves these rows out).
      ...(steadyWarmMs > 0 ? [
        { name: 'watch, 1 Hz, steady', argv: [BIN, 'watch', '--interval', '1000'], targetPct: 0.2, tty: true, warmMs: steadyWarmMs, spanTimes: 2 },
        { name: 'record, 1 Hz, steady', argv: [BIN, 'record', '--out', join(fleet.dir, 'rec-steady.ndjson'), '--interval', '1000'], targetPct: 0.2, warmMs: steadyWarmMs, spanTimes: 2 },
        { name: 'serve, no page, steady', argv: [BIN, 'serve', '--port', '0', '--db', join(fleet.dir, 'runs-steady.db')], targetPct: 0.1, warmMs: steadyWarmMs, spanTimes: 4 },
      ] : []),
      { name: 'status --watch, 1 Hz', argv: [BIN, 'status', '--watch', '--interval', '1000'], targetPct: null, warmMs: 5000 },
      { name: 'run, default 10 Hz', argv: [BIN, 'run', '--gpus', '0', '--', 'sleep', '600'], targetPct: null, warmMs: 5000 },
    ];
    // GPUMEM_BENCH_SAMPLING_ONLY='watch, 1 Hz, steady;record, 1 Hz, steady' (parts of row names, ';' between
    // them) runs only those rows: a long warm-up (GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS=600000) without the others.
    const only = (process.env.GPUMEM_BENCH_SAMPLING_ONLY ?? '').split(';').map((w) => w.trim()).filter((w) => w !== '');
    const chosen = only.length === 0 ? consumers : consumers.filter((c) => only.some((w) => c.name.includes(w)));
    if (chosen.length === 0) throw new Error(`GPUMEM_BENCH_SAMPLING_ONLY=${only.join(';')} names no row (rows: ${consumers.map((c) => c.name).join('; ')})`);
    process.stdout.write(`fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids), per-call CPU of an H100 (GPUMEM_FAKE_NVML_COSTS=${env.GPUMEM_FAKE_NVML_COSTS}); ${spanMs / 1000} s measured after each command's warm-up (steady rows: ${steadyWarmMs / 1000} s warm-up, two to four times the span)\n`);
    process.stdout.write(`load average at the start: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} (CPU figures on a loaded machine are upper bounds; calls are exact)\n`);
    const rows: string[] = [];
    let n = 0;
    let floorPct: number | null = null;
    /** The NVML floor's CPU beyond its driver charges: waking, koffi, the calls' own overhead. */
    let callsFloorPct: number | null = null;
    for (const c of chosen) {
      const m = await measure(c, env, fleet.dir, spanMs * (c.spanTimes ?? 1), ++n);
      if (typeof m === 'string') {
        rows.push(`${c.name.padEnd(28)} ${m}`);
        continue;
      }
      if (c.floor) {
        floorPct = m.cpuPct;
        rows.push(`${c.name.padEnd(28)} CPU ${m.cpuPct.toFixed(3)} % of a core over ${(m.spanMs / 1000).toFixed(0)} s`);
        continue;
      }
      if (c.nvmlFloor) {
        callsFloorPct = m.cpuPct - m.driverPct;
        rows.push(`${c.name.padEnd(28)} CPU ${m.cpuPct.toFixed(3)} % of a core, of it the driver by the table ${m.driverPct.toFixed(3)} %: ${callsFloorPct.toFixed(3)} % beyond the driver`);
        continue;
      }
      const target = c.targetPct === null ? 'no target' : `target ≤ ${c.targetPct} %: ${m.cpuPct <= c.targetPct ? 'met' : 'MISSED'}`;
      rows.push(`${c.name.padEnd(28)} CPU ${m.cpuPct.toFixed(3)} % of a core (${target}); of it the driver by the table ${m.driverPct.toFixed(3)} %; ${m.samples} samples in ${(m.spanMs / 1000).toFixed(0)} s`);
      // A 1-Hz command pays the driver and the idle timer before any work of its own: what the target leaves it.
      if (c.targetPct !== null && floorPct !== null && !c.argv.includes('serve')) {
        const own = m.cpuPct - m.driverPct - floorPct;
        rows.push(`${''.padEnd(28)} gpumem's own (CPU less the driver and the idle-timer floor) ${own.toFixed(3)} %; the target leaves it ${(c.targetPct - m.driverPct - floorPct).toFixed(3)} %`);
      }
      // The same against a Node process making the sample's calls: what is left is work on the answers.
      if (c.targetPct !== null && callsFloorPct !== null && !c.argv.includes('serve')) {
        const own = m.cpuPct - m.driverPct - callsFloorPct;
        rows.push(`${''.padEnd(28)} beyond the NVML-calls floor (CPU less the driver and that floor's own) ${own.toFixed(3)} %; the target leaves ${(c.targetPct - m.driverPct - callsFloorPct).toFixed(3)} %`);
      }
      rows.push(`${''.padEnd(28)} driver CPU per sample ${m.driverMsPerSample.toFixed(3)} ms = ${(m.driverMsPerSample / GPUS).toFixed(3)} ms per GPU (target ≤ 0.2 ms per GPU: ${m.driverMsPerSample / GPUS <= 0.2 ? 'met' : 'MISSED'})`);
      const per = Object.entries(m.perSample).sort((x, y) => y[1] - x[1]).map(([fn, k]) => `${short(fn)} ${k.toFixed(2)}`);
      rows.push(`${''.padEnd(28)} calls per sample (8 GPUs): ${per.join(', ')}`);
    }
    process.stdout.write(`${rows.join('\n')}\n`);
    process.env.GPUMEM_FAKE_NVML_SCENARIO = fleet.scenario;
    process.stdout.write(`${describeCallsPerSample(GPUS)}\n`);
  } finally {
    fleet.stop();
  }
}
