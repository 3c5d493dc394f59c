/**
 * Does the fake driver's H100 cost table (test/fake-nvml/fake_costs.c) reproduce what gpumem measured on the
 * H100 itself? Two figures from bench/results/2026-11-27-h100-80gb/, both taken with gpumem 12ec02a, whose
 * sample read every field every sample (the NVML source's default still does):
 *  1. the kit's status-bench: 500 back-to-back NVML samples, one GPU, one process: median 4.03 ms (wall);
 *  2. `gpumem status --watch --interval 1000`, one GPU, one process: 0.77 % of a core over 30 s.
 * The table was taken from pynvml's per-call figures and NOT fitted to either; this prints what the fake gives
 * for the same two measurements in the same shape, and the ratio. Figure 2 is re-created with `status --watch
 * --json` (every field every sample, as 12ec02a's table view read them; JSON instead of the table drawn).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openNvmlSource } from '../src/sources/nvml/index.js';
import { countsOf, fakeCallCounter } from '../test/fake-nvml/calls.js';
import { fakeNvmlLib } from '../test/fake-nvml/scenario.js';
import { startFleet } from './fleet.js';
import { median, timeEach } from './timing.js';
import { cpuSeconds } from './proc-cpu.js';

const H100_STATUS_BENCH_MEDIAN_MS = 4.03;
const H100_STATUS_WATCH_PCT = 0.77;
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));


export async function run(): Promise<void> {
  const fleet = await startFleet('calibration', 1, 1, () => 40);
  try {
    const lib = fakeNvmlLib('590');
    process.env.GPUMEM_FAKE_NVML_SCENARIO = fleet.scenario;
    const counter = fakeCallCounter(lib);
    const nvml = openNvmlSource({ libPath: lib });
    await timeEach(20, () => nvml.readSample(), 20);
    counter.reset();
    const cpu = process.cpuUsage();
    const times = await timeEach(500, () => nvml.readSample(), 0);
    const used = process.cpuUsage(cpu);
    const calls = counter.read();
    nvml.close();
    const tableMs = Object.values(calls.calls).reduce((sum, c) => sum + c.count * c.costNs, 0) / 1e6 / 500;
    const per = Object.entries(countsOf(calls)).map(([fn, n]) => `${fn.replace(/^nvmlDeviceGet/, '')} ${(n / 500).toFixed(2)}`);
    const m = median(times);
    process.stdout.write([
      'the kit\'s status-bench sample (every field, 1 GPU × 1 process), 500 samples on the fake with the H100 table:',
      `  calls per sample: ${per.join(', ')}`,
      `  by the table ${tableMs.toFixed(2)} ms of driver CPU; measured median ${m.toFixed(2)} ms wall, CPU ${((used.user + used.system) / 1000 / 500).toFixed(2)} ms per sample`,
      `  H100: median ${H100_STATUS_BENCH_MEDIAN_MS} ms → fake / H100 ${(m / H100_STATUS_BENCH_MEDIAN_MS).toFixed(2)}× (goal 0.9–1.1×)`,
    ].join('\n') + '\n');

    // gpumem's own share is measured with free calls in the same run (this child only), the driver's by the table.
    const watchPct = async (costs: string): Promise<number> => {
      const env = { ...process.env, GPUMEM_FAKE_NVML_SCENARIO: fleet.scenario, GPUMEM_NVML_LIB: lib, HOME: fleet.dir, GPUMEM_FAKE_NVML_COSTS: costs };
      const child = spawn(process.execPath, [BIN, 'status', '--watch', '--json', '--interval', '1000', '--source', 'nvml'], { env, stdio: 'ignore' });
      try {
        await sleep(4000);
        const before = cpuSeconds(child.pid as number);
        const t0 = performance.now();
        await sleep(spanMs);
        return ((cpuSeconds(child.pid as number) - before) / ((performance.now() - t0) / 1000)) * 100;
      } finally {
        child.kill('SIGINT');
      }
    };
    const spanMs = Number(process.env.GPUMEM_BENCH_CALIBRATION_MS ?? 30_000);
    const withCosts = await watchPct('h100');
    const own = await watchPct('off');
    process.stdout.write([
      `status --watch --json at 1 Hz (every field), 1 GPU × 1 process, ${spanMs / 1000} s: ${withCosts.toFixed(2)} % of a core (gpumem's own work, free calls: ${own.toFixed(2)} %; the table's driver CPU: ${(tableMs / 10).toFixed(2)} %)`,
      `  H100 (12ec02a's status --watch, every field): ${H100_STATUS_WATCH_PCT} % → fake / H100 ${(withCosts / H100_STATUS_WATCH_PCT).toFixed(2)}×; the H100 figure less gpumem's own work here leaves ${((H100_STATUS_WATCH_PCT - own) * 10).toFixed(1)} ms of driver CPU per sample`,
      `  load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} (a loaded machine adds to both of the fake's figures)`,
    ].join('\n') + '\n');
  } finally {
    fleet.stop();
  }
}

