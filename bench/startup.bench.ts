/**
 * What a person feels when typing a one-shot command: whole processes from spawn to exit, on the fake
 * libnvidia-ml.so.1 charging the H100's per-call costs, with real pids as GPU processes.
 *  - 1 GPU × 4 processes and 8 GPUs × 64: `gpumem status --json` and `gpumem status` beside `node -e 0` (the
 *    floor any Node tool pays), `python3 -c pass`, and the peers `nvitop -1` and `gpustat` reading the same fake
 *    driver through LD_LIBRARY_PATH (bench/peers.ts finds them). Goal: gpumem's time beyond `node -e 0` ≤ 30 ms
 *    at 1 × 4, and ahead of every peer at every size.
 *  - 8 × 64: time to the first output of `gpumem` (doctor, which prints the GPUs at once and its findings after
 *    a 3 s window) against `nvitop -1`'s first output, in the same run. Goal: doctor first.
 * Wall is the median of interleaved rounds; CPU (user + system) the mean, steadier on a shared machine. The fake
 * driver's own charged CPU in one gpumem run is printed apart: nvmlInit alone is charged 20 ms a GPU (an assumed
 * figure, see test/fake-nvml/fake_costs.c). Runs the built dist/ (npm run bench builds it first).
 * GPUMEM_BENCH_BASELINE=/path/to/other/dist/cli/bin.js adds an older build's status --json to the same run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeNvmlEnv, fakeNvmlLib } from '../test/fake-nvml/scenario.js';
import { startFleet } from './fleet.js';
import { findPeer } from './peers.js';
import { timeFirstOutput, timeInterleaved, type Case, type Timed } from './spawn-timing.js';
import { median } from './timing.js';

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const GOAL_BEYOND_NODE_MS = 30;

function peerCases(env: NodeJS.ProcessEnv): { cases: Case[]; missing: string[] } {
  const cases: Case[] = [];
  const missing: string[] = [];
  const nvitop = findPeer('nvitop');
  if ('path' in nvitop) cases.push({ label: 'nvitop -1', argv: [nvitop.path, '-1'], env });
  else missing.push(nvitop.missing);
  const gpustat = findPeer('gpustat');
  if ('path' in gpustat) cases.push({ label: 'gpustat', argv: [gpustat.path], env });
  else missing.push(gpustat.missing);
  return { cases, missing };
}

/** The fake driver's charged CPU ms in one `gpumem status --json` (its per-function counters, fake_costs.c). */
function driverChargedMs(env: NodeJS.ProcessEnv, dir: string): number {
  const out = join(dir, 'calls.json');
  const r = spawnSync(process.execPath, [BIN, 'status', '--json', '--source', 'nvml'], { env: { ...env, GPUMEM_FAKE_NVML_CALLS_OUT: out }, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`gpumem status --json with counted calls: exit ${r.status}`);
  const calls = (JSON.parse(readFileSync(out, 'utf8')) as { calls: Record<string, { spentNs: number }> }).calls;
  return Object.values(calls).reduce((sum, c) => sum + c.spentNs, 0) / 1e6;
}

const ms = (v: number): string => `${v.toFixed(1).padStart(7)} ms`;
const ratio = (a: Timed, b: Timed | undefined): string => (b ? `wall ${(a.wallMs / b.wallMs).toFixed(2)}×, CPU ${(a.cpuMs / b.cpuMs).toFixed(2)}×` : 'not measured');

async function oneSize(gpus: number, procs: number, rounds: number): Promise<string[]> {
  const fleet = await startFleet('startup', gpus, procs, () => 50);
  try {
    const lib = fakeNvmlLib('590');
    const env = { ...process.env, ...fakeNvmlEnv('590', fleet.scenario), LD_LIBRARY_PATH: dirname(lib) };
    const node = process.execPath;
    const cases: Case[] = [
      { label: 'node -e 0', argv: [node, '-e', '0'] },
      { label: 'python3 -c pass', argv: ['python3', '-c', 'pass'] },
      { label: 'gpumem status --json', argv: [node, BIN, 'status', '--json', '--source', 'nvml'], env },
      { label: 'gpumem status', argv: [node, BIN, 'status', '--source', 'nvml'], env },
      // As a person runs it: the executable, whose launcher line starts Node (with the flags it gives status).
      { label: 'gpumem status --json, exe', argv: [BIN, 'status', '--json', '--source', 'nvml'], env },
    ];
    const baseline = process.env.GPUMEM_BENCH_BASELINE;
    if (baseline) {
      cases.push({ label: 'baseline status --json', argv: [node, baseline, 'status', '--json', '--source', 'nvml'], env });
      cases.push({ label: 'baseline status --json, exe', argv: [baseline, 'status', '--json', '--source', 'nvml'], env });
    }
    const peers = peerCases(env);
    cases.push(...peers.cases);
    const t = timeInterleaved(cases, rounds);
    const lines = [`${gpus} GPU${gpus > 1 ? 's' : ''} × ${procs} processes: median wall of ${rounds} interleaved rounds, mean CPU (user + system)`];
    for (const [label, v] of t) lines.push(`  ${label.padEnd(26)} wall ${ms(v.wallMs)}  CPU ${ms(v.cpuMs)}`);
    const node0 = t.get('node -e 0') as Timed;
    const json = t.get('gpumem status --json') as Timed;
    const table = t.get('gpumem status') as Timed;
    const charged = driverChargedMs(env, fleet.dir);
    const goal = gpus === 1 ? `  (goal ≤ ${GOAL_BEYOND_NODE_MS} ms: ${json.wallMs - node0.wallMs <= GOAL_BEYOND_NODE_MS ? 'met' : 'not met'})` : '';
    lines.push(`  gpumem status --json beyond node -e 0: wall ${(json.wallMs - node0.wallMs).toFixed(1)} ms, CPU ${(json.cpuMs - node0.cpuMs).toFixed(1)} ms${goal}`);
    const exe = t.get('gpumem status --json, exe') as Timed;
    lines.push(`  the executable's status --json beyond node -e 0: wall ${(exe.wallMs - node0.wallMs).toFixed(1)} ms, CPU ${(exe.cpuMs - node0.cpuMs).toFixed(1)} ms (its launcher's shell included)`);
    lines.push(`    of which the fake driver's charged calls: ${charged.toFixed(1)} ms CPU (nvmlInit 20 ms a GPU assumed, the rest measured on the H100)`);
    for (const peer of ['nvitop -1', 'gpustat']) {
      lines.push(`  gpumem status --json / ${peer}: ${ratio(json, t.get(peer))};  gpumem status / ${peer}: ${ratio(table, t.get(peer))}  (< 1: gpumem ahead)`);
      lines.push(`  the executable's status --json / ${peer}: ${ratio(exe, t.get(peer))}`);
    }
    const base = t.get('baseline status --json');
    if (base) lines.push(`  this build / baseline, status --json: ${ratio(json, base)};  the executables: ${ratio(exe, t.get('baseline status --json, exe'))}`);
    lines.push(...peers.missing.map((m) => `  ${m}`));
    return lines;
  } finally {
    fleet.stop();
  }
}

async function doctorFirstOutput(rounds: number): Promise<string[]> {
  const gpus = 8;
  const procs = 64;
  const fleet = await startFleet('startup-doctor', gpus, procs, () => 50);
  try {
    const lib = fakeNvmlLib('590');
    const env = { ...process.env, ...fakeNvmlEnv('590', fleet.scenario), LD_LIBRARY_PATH: dirname(lib) };
    const nvitop = findPeer('nvitop');
    // The executable, as a person starts it (its launcher line picks the file and flags Node starts with).
    const cases: Case[] = [{ label: 'gpumem (doctor)', argv: [BIN, 'doctor'], env, okStatus: [0, 1] }];
    const baseline = process.env.GPUMEM_BENCH_BASELINE;
    if (baseline) cases.push({ label: 'baseline (doctor)', argv: [baseline, 'doctor'], env, okStatus: [0, 1] });
    if ('path' in nvitop) cases.push({ label: 'nvitop -1', argv: [nvitop.path, '-1'], env });
    const first = new Map(cases.map((c) => [c.label, [] as number[]]));
    const exit = new Map(cases.map((c) => [c.label, [] as number[]]));
    for (let round = 0; round < rounds + 1; round++) {
      for (const c of cases) {
        const r = await timeFirstOutput(c);
        if (round === 0) continue;
        first.get(c.label)?.push(r.firstMs);
        exit.get(c.label)?.push(r.exitMs);
      }
    }
    const lines = [`${gpus} GPUs × ${procs} processes: time to the first output, median of ${rounds} interleaved rounds`];
    for (const c of cases) lines.push(`  ${c.label.padEnd(26)} first output ${ms(median(first.get(c.label) ?? []))}, exit ${ms(median(exit.get(c.label) ?? []))}`);
    const ours = median(first.get('gpumem (doctor)') ?? []);
    const theirs = first.get('nvitop -1');
    if (theirs) lines.push(`  doctor's first output / nvitop -1's: ${(ours / median(theirs)).toFixed(2)}×  (goal ≤ 1)`);
    else lines.push(`  ${'missing' in nvitop ? nvitop.missing : ''}`);
    const base = first.get('baseline (doctor)');
    if (base) lines.push(`  this build / baseline, doctor's first output: ${(ours / median(base)).toFixed(2)}×`);
    return lines;
  } finally {
    fleet.stop();
  }
}

export async function run(): Promise<void> {
  const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const atStart = load();
  const lines = [
    ...(await oneSize(1, 4, Number(process.env.GPUMEM_BENCH_STARTUP_ROUNDS ?? 21))),
    ...(await oneSize(8, 64, Number(process.env.GPUMEM_BENCH_STARTUP_ROUNDS_LARGE ?? 9))),
    ...(await doctorFirstOutput(Number(process.env.GPUMEM_BENCH_STARTUP_DOCTOR_ROUNDS ?? 5))),
    `load average at the start / end: ${atStart} / ${load()} (numbers taken on a loaded machine compare only within the run)`,
    `node ${process.version}; nvitop and gpustat skip the functions the fake driver lacks (fan, ECC, encoder…), which a real driver would charge them`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
