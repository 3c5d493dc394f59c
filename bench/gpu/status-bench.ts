/**
 * The `gpumem status` sample benchmark for a real GPU machine: one full sample (all devices, their
 * processes, /proc host facts) through our NVML source and through spawning `nvidia-smi -q -x`, side by
 * side in one run; medians and the ratio (issue target: NVML ≥ 50× faster than nvidia-smi on a real GPU).
 * bench/status.bench.ts measures the same against the fake driver; this one measures whatever driver is
 * installed, so it needs no test double. scripts/stage-device.sh bundles it to .device/status-bench.mjs.
 *
 *   node .device/status-bench.mjs [--nvml-samples 500] [--smi-samples 40] [--paced-samples 10] [--nvml-lib PATH] [--smi PATH] [--out FILE.json]
 *
 * Before timing it checks that both sources see the same devices, memory (within 1 MiB) and pids, so the
 * two timings are of the same work.
 *
 * It also times the NVML sample with fewer fields (`variants`: the cheap fields only, cheap + total energy,
 * cheap + per-process SM %), each by wall-clock median and mean and by this process's CPU time per sample: the
 * per-call costs measured with pynvml (energy 3.84 ms, per-process SM % 2.53 ms) add up to more than the whole
 * 4.03 ms sample measured on the H100, and these rows say which call costs less inside gpumem's sample loop.
 * The same field sets are also read once a second (`--paced-samples`, default 10 each), the rate the live
 * commands sample at: `gpumem status --watch` at 1 Hz used more CPU per sample on the H100 (0.77 % of a core,
 * ~5.7 ms or more of driver CPU a sample) than the back-to-back median allows, so a call's cost seems to
 * depend on how soon it follows the one before.
 *
 * And what opening an NVML session costs a one-shot command (`--session-samples`, default 10): fresh processes,
 * each loading the library and timing, by its own CPU and the wall clock, the first nvmlInit_v2 and the last
 * nvmlShutdown. The fake driver charges an assumed 20 ms for that init (test/fake-nvml/fake_costs.c); this is
 * the figure that replaces the assumption. The same again with nvmlInitWithFlags(NO_ATTACH), which opens a
 * session without attaching the GPUs, each followed by a first query (count, GPU 0's handle and memory): whether
 * a one-shot command could skip attaching the GPUs it does not read, and whether a query still answers.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import koffi from 'koffi';
import type { Sample } from '../../src/core/types.js';
import { openNvmlSource, type NvmlFields } from '../../src/sources/nvml/index.js';
import { createHostEnricher } from '../../src/sources/procfs/index.js';
import { openSmiSource } from '../../src/sources/smi/index.js';
import { median, timeEach } from '../timing.js';

const MiB = 1024 * 1024;



/** Differences between two samples of the same moment: device memory beyond 1 MiB, or different pid sets. */
function compareSamples(a: Sample, b: Sample): string[] {
  const problems: string[] = [];
  if (a.devices.length !== b.devices.length) problems.push(`device count ${a.devices.length} vs ${b.devices.length}`);
  for (const d of a.devices) {
    const e = b.devices.find((x) => x.uuid === d.uuid);
    if (!e) {
      problems.push(`device ${d.uuid} missing from nvidia-smi`);
      continue;
    }
    for (const key of ['totalBytes', 'reservedBytes', 'usedBytes', 'freeBytes'] as const) {
      const x = d.memory[key];
      const y = e.memory[key];
      if (x === null || y === null || Math.abs(x - y) > MiB) problems.push(`device ${d.index} ${key}: NVML ${x} vs nvidia-smi ${y}`);
    }
  }
  const pids = (s: Sample): string => [...new Set(s.processes.map((p) => p.pid))].sort((x, y) => x - y).join(',');
  if (pids(a) !== pids(b)) problems.push(`pids: NVML [${pids(a)}] vs nvidia-smi [${pids(b)}]`);
  return problems;
}

/** Field sets timed beside the full sample (see the header). */
const VARIANTS: Record<string, NvmlFields> = {
  cheap: { clocks: true, energy: false, processSmEveryMs: null },
  cheapPlusEnergy: { clocks: true, energy: true, processSmEveryMs: null },
  cheapPlusSm: { clocks: true, energy: false, processSmEveryMs: 0 },
};

/** Wall median and mean, and CPU ms per sample (this process, user + system), over `n` samples of `fields`. */
async function timeVariant(fields: NvmlFields | undefined, n: number, libPath: string | undefined, paced: number): Promise<{ medianMs: number; meanMs: number; cpuMsPerSample: number; pacedCpuMsPerSample: number | null }> {
  const source = openNvmlSource({ ...(libPath ? { libPath } : {}), ...fields });
  try {
    await timeEach(20, () => source.readSample(), 20);
    const cpu = process.cpuUsage();
    const times = await timeEach(n, () => source.readSample(), 0);
    const used = process.cpuUsage(cpu);
    // Once a second: CPU of the read alone (the wait is idle and not counted).
    let pacedUs = 0;
    for (let i = 0; i < paced; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const before = process.cpuUsage();
      await source.readSample();
      const after = process.cpuUsage(before);
      pacedUs += after.user + after.system;
    }
    return {
      medianMs: median(times), meanMs: times.reduce((a, b) => a + b, 0) / times.length, cpuMsPerSample: (used.user + used.system) / 1000 / n,
      pacedCpuMsPerSample: paced > 0 ? pacedUs / 1000 / paced : null,
    };
  } finally {
    source.close();
  }
}

interface SessionCost {
  loadCpuMs: number;
  initCpuMs: number;
  initWallMs: number;
  /** The first query after the init: device count, GPU 0's handle and its memory (what a one-shot reads first). */
  firstQueryCpuMs: number;
  shutdownCpuMs: number;
}

/** nvmlInitWithFlags' flag that opens a session without attaching the GPUs (nvml.h: NVML_INIT_FLAG_NO_ATTACH). */
const NVML_INIT_FLAG_NO_ATTACH = 2;

const cpuMsSince = (before: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
};

/**
 * In a fresh process (`--session-probe`): the library loaded, then the first init, the first query and
 * nvmlShutdown timed. `flags` null: nvmlInit_v2 (what gpumem calls); else nvmlInitWithFlags(flags). With
 * NO_ATTACH a driver may leave attaching a GPU to the first query that needs it, so the query is timed too,
 * and its return codes kept: a query that fails without the attach is the answer to whether gpumem can use it.
 */
function probeSession(libPath: string, flags: number | null): SessionCost & { queryRc: number[] } {
  let cpu = process.cpuUsage();
  const lib = koffi.load(libPath);
  const init = flags === null ? (lib.func('nvmlInit_v2', 'int', []) as () => number) : (() => (lib.func('nvmlInitWithFlags', 'int', ['uint']) as (f: number) => number)(flags));
  const count = lib.func('nvmlDeviceGetCount_v2', 'int', ['void *']) as (out: Uint32Array) => number;
  const device = koffi.pointer(koffi.opaque('probe_device'));
  const handleOf = lib.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['uint', koffi.out(koffi.pointer(device))]) as (i: number, out: unknown[]) => number;
  // nvmlMemory_t (total, free, used: three unsigned long long), read into a buffer: only the return code counts.
  const memory = lib.func('nvmlDeviceGetMemoryInfo', 'int', [device, 'void *']) as (h: unknown, out: Buffer) => number;
  const shutdown = lib.func('nvmlShutdown', 'int', []) as () => number;
  const loadCpuMs = cpuMsSince(cpu);
  cpu = process.cpuUsage();
  const started = performance.now();
  const rc = init();
  const initWallMs = performance.now() - started;
  const initCpuMs = cpuMsSince(cpu);
  if (rc !== 0) throw new Error(`${flags === null ? 'nvmlInit_v2' : `nvmlInitWithFlags(${flags})`} returned ${rc}`);
  cpu = process.cpuUsage();
  const n = new Uint32Array(1);
  const handle: unknown[] = [null];
  const queryRc = [count(n), handleOf(0, handle)];
  queryRc.push(queryRc[1] === 0 ? memory(handle[0], Buffer.alloc(64)) : -1);
  const firstQueryCpuMs = cpuMsSince(cpu);
  cpu = process.cpuUsage();
  shutdown();
  return { loadCpuMs, initCpuMs, initWallMs, firstQueryCpuMs, shutdownCpuMs: cpuMsSince(cpu), queryRc };
}

/** `n` fresh processes running this script with --session-probe; the medians of what they measured. */
function timeSessions(n: number, libPath: string, flags: number | null): (SessionCost & { queryRc: number[] }) | null {
  const runs: Array<SessionCost & { queryRc: number[] }> = [];
  for (let i = 0; i < n; i++) {
    const args = [...process.execArgv, process.argv[1] as string, '--session-probe', '--nvml-lib', libPath, ...(flags === null ? [] : ['--init-flags', String(flags)])];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`session probe: ${r.stderr.trim() || `exit ${r.status}`}`);
    runs.push(JSON.parse(r.stdout) as SessionCost & { queryRc: number[] });
  }
  if (runs.length === 0) return null;
  const mid = (key: keyof SessionCost): number => median(runs.map((x) => x[key]));
  // The return codes of the last run (a driver answers the same way each time).
  return {
    loadCpuMs: mid('loadCpuMs'), initCpuMs: mid('initCpuMs'), initWallMs: mid('initWallMs'), firstQueryCpuMs: mid('firstQueryCpuMs'),
    shutdownCpuMs: mid('shutdownCpuMs'), queryRc: (runs[runs.length - 1] as { queryRc: number[] }).queryRc,
  };
}

const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'nvml-samples': { type: 'string', default: '500' },
      'smi-samples': { type: 'string', default: '40' },
      'paced-samples': { type: 'string', default: '10' },
      'session-samples': { type: 'string', default: '10' },
      'session-probe': { type: 'boolean', default: false },
      'init-flags': { type: 'string' },
      'nvml-lib': { type: 'string' },
      smi: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (values['session-probe']) {
    const flags = values['init-flags'] === undefined ? null : Number(values['init-flags']);
    process.stdout.write(`${JSON.stringify(probeSession(values['nvml-lib'] ?? 'libnvidia-ml.so.1', flags))}\n`);
    return;
  }
  const nvmlN = Number(values['nvml-samples']);
  const smiN = Number(values['smi-samples']);
  const nvml = openNvmlSource(values['nvml-lib'] ? { libPath: values['nvml-lib'] } : {});
  const smi = await openSmiSource(values.smi ? { smiPath: values.smi } : {});
  const enrich = createHostEnricher();
  try {
    const first = await nvml.readSample();
    const agreement = compareSamples(first, await smi.readSample());
    const nvmlOnly = await timeEach(nvmlN, () => nvml.readSample(), 5);
    const nvmlFull = await timeEach(nvmlN, async () => enrich(await nvml.readSample()), 5);
    const paced = Number(values['paced-samples']);
    const variants: Record<string, Awaited<ReturnType<typeof timeVariant>>> = { all: await timeVariant(undefined, nvmlN, values['nvml-lib'], paced) };
    for (const [name, fields] of Object.entries(VARIANTS)) variants[name] = await timeVariant(fields, nvmlN, values['nvml-lib'], paced);
    const session = timeSessions(Number(values['session-samples']), values['nvml-lib'] ?? 'libnvidia-ml.so.1', null);
    const sessionNoAttach = timeSessions(Number(values['session-samples']), values['nvml-lib'] ?? 'libnvidia-ml.so.1', NVML_INIT_FLAG_NO_ATTACH);
    const smiOnly = await timeEach(smiN, () => smi.readSample(), 5);
    const smiFull = await timeEach(smiN, async () => enrich(await smi.readSample()), 5);
    const result = {
      schemaVersion: 1,
      kind: 'gpumem.bench.status',
      node: process.version,
      devices: first.devices.map((d) => ({ index: d.index, name: d.name, driverVersion: d.driverVersion })),
      processRows: first.processes.length,
      samples: { nvml: nvmlN, smi: smiN },
      medianMs: { nvml: median(nvmlOnly), nvmlWithProc: median(nvmlFull), smi: median(smiOnly), smiWithProc: median(smiFull) },
      ratio: { smiOverNvml: median(smiOnly) / median(nvmlOnly), smiOverNvmlWithProc: median(smiFull) / median(nvmlFull) },
      target: 'full sample (devices + processes + /proc) through NVML >= 50x faster than nvidia-smi -q -x',
      variants,
      session,
      sessionNoAttach,
      sourcesAgree: agreement.length === 0,
      disagreements: agreement,
    };
    const m = result.medianMs;
    process.stdout.write(
      [
        `${first.devices.length} GPU(s) (${first.devices[0]?.name ?? '?'}, driver ${first.devices[0]?.driverVersion ?? '?'}), ${first.processes.length} process row(s)`,
        `NVML sample                   median ${fmt(m.nvml)}  (${nvmlN} samples)`,
        `NVML sample + /proc facts     median ${fmt(m.nvmlWithProc)}`,
        `nvidia-smi -q -x, spawn+parse median ${fmt(m.smi)}  (${smiN} samples)`,
        `nvidia-smi -q -x + /proc      median ${fmt(m.smiWithProc)}`,
        `ratio nvidia-smi / NVML       ${result.ratio.smiOverNvml.toFixed(1)}× (GPU read only), ${result.ratio.smiOverNvmlWithProc.toFixed(1)}× (full sample; target ≥ 50×)`,
        ...Object.entries(variants).map(([name, v]) => `NVML fields ${name.padEnd(16)} median ${fmt(v.medianMs)}, mean ${fmt(v.meanMs)}, CPU ${fmt(v.cpuMsPerSample)} per sample${v.pacedCpuMsPerSample === null ? '' : `; at 1 Hz CPU ${fmt(v.pacedCpuMsPerSample)}`}`),
        session === null ? 'NVML session: not measured (--session-samples 0)'
          : `NVML session, fresh process (median of ${values['session-samples']}): load CPU ${fmt(session.loadCpuMs)}, nvmlInit_v2 CPU ${fmt(session.initCpuMs)} (wall ${fmt(session.initWallMs)}), first query CPU ${fmt(session.firstQueryCpuMs)}, nvmlShutdown CPU ${fmt(session.shutdownCpuMs)}`,
        ...(sessionNoAttach === null ? [] : [`NVML session without attaching (nvmlInitWithFlags NO_ATTACH): init CPU ${fmt(sessionNoAttach.initCpuMs)} (wall ${fmt(sessionNoAttach.initWallMs)}), first query CPU ${fmt(sessionNoAttach.firstQueryCpuMs)} (return codes ${sessionNoAttach.queryRc.join(', ')}: count, handle, memory)`]),
        `sources agree (memory within 1 MiB, same pids): ${agreement.length === 0 ? 'yes' : `NO — ${agreement.join('; ')}`}`,
        '',
      ].join('\n'),
    );
    if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    nvml.close();
    smi.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`status-bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
