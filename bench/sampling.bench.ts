/**
 * What sampling costs each consumer, against the targets: at 8 GPUs × 64 processes (real sleeping pids, each
 * with an SM share) on the fake driver charging the H100's per-call CPU time, every live command runs as a
 * person runs it (watch in a tmux pane) at 1 Hz — serve with no page open and no scrape at its idle pace, run
 * at its default 10 Hz — and this prints per command: NVML calls per sample by function (from the fake's
 * GPUMEM_FAKE_NVML_CALLS_LOG, between two sample boundaries inside the measured span, start-up excluded), the
 * driver's CPU those calls cost by the table, and the process's CPU as % of one core (every thread's run time,
 * bench/proc-cpu.ts) over the span, beside an idle Node process's with the same 1-s timer (the floor of any
 * 1-Hz command) and a Node process making a steady sample's NVML calls at 1 Hz (bench/nvml-floor.mjs: what any Node
 * tool pays before doing anything with the answers); the steady rows measure watch, record and serve side by side past their first five minutes. The one-shot
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
  /** Rows with the same group name, listed one after another, run side by side over one span (measure). */
  together?: string;
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

interface Launched {
  pid: number;
  log: string;
  stop: () => void;
}

/** Starts one consumer with its own calls log (a tmux pane where it needs a terminal). */
function launch(c: Consumer, env: Record<string, string>, dir: string, n: number): Launched {
  const log = join(dir, `calls-${n}.ndjson`);
  writeFileSync(log, '');
  const fullEnv = { ...env, GPUMEM_FAKE_NVML_CALLS_LOG: log };
  if (c.tty) {
    const socket = `gpumem-bench-sampling-${process.pid}-${n}`;
    const quoted = c.argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, ...fullEnv } });
    tmux('new-session', '-d', '-s', 'b', '-x', '160', '-y', '50', `exec ${quoted}`);
    const pid = Number(tmux('display-message', '-p', '-t', 'b', '#{pane_pid}').stdout.trim());
    return { pid, log, stop: () => void tmux('kill-server') };
  }
  const child = spawn(c.argv[0] as string, c.argv.slice(1), { env: { ...process.env, ...fullEnv }, stdio: 'ignore', cwd: dir });
  return { pid: child.pid as number, log, stop: () => void child.kill('SIGINT') };
}

/** The consumer's CPU and calls between `fromMs` and `toMs`, given the CPU seconds it used in between. */
function account(c: Consumer, l: Launched, fromMs: number, toMs: number, used: number): Measured | string {
  const cpuPct = (used / ((toMs - fromMs) / 1000)) * 100;
  if (c.floor) return { cpuPct, samples: 0, perSample: {}, driverMsPerSample: 0, driverPct: 0, spanMs: toMs - fromMs };
  const lines = readFileSync(l.log, 'utf8').trim().split('\n').filter((x) => x !== '').map((x) => JSON.parse(x) as LogLine).filter((x) => x.tMs >= fromMs && x.tMs <= toMs);
  if (lines.length < 2) return `fewer than two sample boundaries in ${(toMs - fromMs) / 1000} s`;
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
  return { cpuPct, samples, perSample, driverMsPerSample: driverNs / 1e6 / samples, driverPct: (driverNs / 1e6 / (b.tMs - a.tMs)) * 100, spanMs: toMs - fromMs };
}

/**
 * Runs consumers side by side: all start together, and each is measured over the same span after the longest
 * warm-up (a 1-Hz command is idle nearly all the time, so two cores hold several without one slowing another;
 * it also keeps an hour-long warm-up from costing an hour per row). One consumer alone is the same thing.
 */
async function measure(cs: Consumer[], env: Record<string, string>, dir: string, spanMs: number, n: number): Promise<Array<Measured | string>> {
  const started = cs.map((c, i) => launch(c, env, dir, n * 10 + i));
  try {
    await sleep(Math.max(...cs.map((c) => c.warmMs)));
    const alive = started.map((l) => existsSync(`/proc/${l.pid}`));
    const fromMs = Date.now();
    const before = started.map((l, i) => (alive[i] ? cpuSeconds(l.pid) : 0));
    await sleep(spanMs * Math.max(...cs.map((c) => c.spanTimes ?? 1)));
    const after = started.map((l, i) => (alive[i] ? cpuSeconds(l.pid) : 0));
    const toMs = Date.now();
    return cs.map((c, i) => (alive[i] ? account(c, started[i] as Launched, fromMs, toMs, (after[i] as number) - (before[i] as number)) : 'exited early'));
  } finally {
    for (const l of started) l.stop();
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
    // Five minutes: V8 is still compiling a recorder's once-a-round code at 90–240 s (docs/nvml.md).
    const steadyWarmMs = Number(process.env.GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS ?? 300_000);
    const consumers: Consumer[] = [
      // What any Node process waking once a second costs: part of every 1-Hz row, and no gpumem work.
      { name: 'floor: idle node, 1 s timer', argv: [node, '-e', 'setInterval(() => {}, 1000)'], targetPct: null, warmMs: 5000, spanTimes: 2, floor: true },
      // What any Node tool pays to make a steady sample's NVML calls once a second through koffi, answers unused.
      { name: 'floor: NVML calls, 1 Hz', argv: [node, NVML_FLOOR], targetPct: null, warmMs: 30_000, spanTimes: 2, nvmlFloor: true },
      { name: 'watch, 1 Hz', argv: [BIN, 'watch', '--interval', '1000'], targetPct: 0.2, tty: true, warmMs: 8000 },
      { name: 'record, 1 Hz', argv: [BIN, 'record', '--out', join(fleet.dir, 'rec.ndjson'), '--interval', '1000'], targetPct: 0.2, warmMs: 5000 },
      { name: 'serve, no page, no scrape', argv: [BIN, 'serve', '--port', '0', '--db', join(fleet.dir, 'runs.db')], targetPct: 0.1, warmMs: 12_000, spanTimes: 4 },
      // The same three as they run for hours, side by side: past V8's first minutes of optimising compilation and
      // heap shrinking, which happen once (GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS=0 leaves these rows out).
      ...(steadyWarmMs > 0 ? [
        { name: 'watch, 1 Hz, steady', argv: [BIN, 'watch', '--interval', '1000'], targetPct: 0.2, tty: true, warmMs: steadyWarmMs, spanTimes: 4, together: 'steady' },
        { name: 'record, 1 Hz, steady', argv: [BIN, 'record', '--out', join(fleet.dir, 'rec-steady.ndjson'), '--interval', '1000'], targetPct: 0.2, warmMs: steadyWarmMs, spanTimes: 4, together: 'steady' },
        { name: 'serve, no page, steady', argv: [BIN, 'serve', '--port', '0', '--db', join(fleet.dir, 'runs-steady.db')], targetPct: 0.1, warmMs: steadyWarmMs, spanTimes: 4, together: 'steady' },
      ] : []),
      { name: 'status --watch, 1 Hz', argv: [BIN, 'status', '--watch', '--interval', '1000'], targetPct: null, warmMs: 5000 },
      { name: 'run, default 10 Hz', argv: [BIN, 'run', '--gpus', '0', '--', 'sleep', '600'], targetPct: null, warmMs: 5000 },
    ];
    // GPUMEM_BENCH_SAMPLING_ONLY='watch, 1 Hz, steady;record, 1 Hz, steady' (parts of row names, ';' between
    // them) runs only those rows: a long warm-up (GPUMEM_BENCH_SAMPLING_STEADY_WARM_MS=600000) without the others.
    const only = (process.env.GPUMEM_BENCH_SAMPLING_ONLY ?? '').split(';').map((w) => w.trim()).filter((w) => w !== '');
    const chosen = only.length === 0 ? consumers : consumers.filter((c) => only.some((w) => c.name.includes(w)));
    if (chosen.length === 0) throw new Error(`GPUMEM_BENCH_SAMPLING_ONLY=${only.join(';')} names no row (rows: ${consumers.map((c) => c.name).join('; ')})`);
    process.stdout.write(`fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids), per-call CPU of an H100 (GPUMEM_FAKE_NVML_COSTS=${env.GPUMEM_FAKE_NVML_COSTS}); ${spanMs / 1000} s measured after each command's warm-up (steady rows: side by side, ${steadyWarmMs / 1000} s warm-up, four times the span)\n`);
    process.stdout.write(`load average at the start: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} (CPU figures on a loaded machine are upper bounds; calls are exact)\n`);
    const rows: string[] = [];
    let n = 0;
    let floorPct: number | null = null;
    /** The NVML floor's CPU beyond its driver charges: waking, koffi, the calls' own overhead. */
    let callsFloorPct: number | null = null;
    // Consecutive rows of one `together` group run side by side (measure); every other row alone.
    const groups: Consumer[][] = [];
    for (const c of chosen) {
      const last = groups[groups.length - 1];
      if (last && c.together !== undefined && last[0]?.together === c.together) last.push(c);
      else groups.push([c]);
    }
    const results: Array<[Consumer, Measured | string]> = [];
    for (const group of groups) {
      const measured = await measure(group, env, fleet.dir, spanMs, ++n);
      group.forEach((c, i) => results.push([c, measured[i] as Measured | string]));
    }
    for (const [c, m] of results) {
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
