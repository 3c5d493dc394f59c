/**
 * A real `gpumem serve` in the test process: the fake libnvidia-ml.so.1 through koffi, real child processes
 * standing in for GPU processes (one with a hostile command line), the live sampler, and the HTTP app on a
 * free loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LiveSampler } from '../../src/orchestrate/index.js';
import { createApp, listen, ServerState, type App, type AppOptions } from '../../src/server/index.js';
import { openSource, type GpuSource } from '../../src/sources/index.js';
import { writeHistory } from './history-fixture.js';
import { fakeH100, fakeNvmlLib, writeScenario, type FakeScenario } from '../fake-nvml/scenario.js';
import { MiB } from '../../src/core/units.js';
import { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState } from '../../src/core/companion/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { liveCompanionPath, writeLiveCompanion } from '../../src/store/index.js';
export { MiB };
export const GPU0_UUID = 'GPU-00000000-0000-4000-8000-000000000000';
/** A command line that would run script if a page put it into markup. */
export const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';

export interface Harness {
  base: string;
  port: number;
  token: string;
  scenarioPath: string;
  /** XDG_RUNTIME_DIR of the server: where running supervisors publish PyTorch numbers. */
  runtimeDir: string;
  children: ChildProcess[];
  trainerPid: number;
  hostilePid: number;
  sampler: LiveSampler;
  app: App;
  /** The scenario with GPU 0's used memory and utilisation replaced. */
  scenario(usedMiB: number, gpuPct: number): FakeScenario;
  close(): Promise<void>;
}

export interface HarnessOptions {
  intervalMs?: number;
  readonly?: boolean;
  /** A history file; 'fixture' writes history-fixture.ts's runs into the test folder. */
  dbPath?: string | null | 'fixture';
  /** The app's sampling pace (page open / none open). */
  pace?: { intervalMs: number; idleIntervalMs: number };
  /** Bounds on snapshot work and analyses, and where the app's one-line warnings go. */
  app?: Pick<AppOptions, 'work' | 'analysis' | 'maxUploadBytes' | 'onWarning'>;
}

/** Starts everything; call close() in afterAll. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-'));
  const dbPath = options.dbPath === 'fixture' ? writeHistory(dir).path : (options.dbPath ?? null);
  const trainer = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
  const hostile = spawn('/bin/sh', ['-c', 'sleep 60', HOSTILE], { stdio: 'ignore' });
  const children = [trainer, hostile];
  const scenarioPath = join(dir, 'scenario.txt');
  const scenario = (usedMiB: number, gpuPct: number): FakeScenario => ({
    driverVersion: '590.48.01',
    cudaVersion: 13010,
    devices: [
      fakeH100(0, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: usedMiB * MiB },
        utilization: { gpuPct, memoryPct: 17 },
        temperatureC: 58,
        power: { drawMw: 412_345, limitMw: 700_000 },
        clocks: { smMhz: 1755, memoryMhz: 2619 },
        energyMj: 987_654_321,
        processes: [{ pid: trainer.pid!, usedBytes: (usedMiB - 1024) * MiB }, { pid: hostile.pid!, usedBytes: 1024 * MiB }],
      }),
      fakeH100(1, { memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 0 } }),
    ],
  });
  writeScenario(scenarioPath, scenario(20_000, 87));
  // The fake driver reads its scenario path from the environment of the process that loads it.
  process.env.GPUMEM_FAKE_NVML_SCENARIO = scenarioPath;
  const source: GpuSource = await openSource({ source: 'nvml', nvmlLib: fakeNvmlLib('590'), env: {} });
  const sampler = new LiveSampler(source, { intervalMs: options.intervalMs ?? 100 });
  const state = new ServerState({ sampler, env: { XDG_RUNTIME_DIR: dir }, dbPath, hostname: 'testhost', cacheMs: 200, diagnosisMs: 200 });
  const token = 'test-token-0123456789abcdef';
  const app = createApp({ state, bindAddress: '127.0.0.1', token: options.readonly ? null : token, kill: { graceMs: 200, killOptions: {} }, ...(options.pace ? { pace: options.pace } : {}), ...options.app });
  await sampler.start();
  const { server, port } = await listen(app, '127.0.0.1', 0);
  return {
    base: `http://127.0.0.1:${port}`, port, token, scenarioPath, runtimeDir: dir, children, trainerPid: trainer.pid!, hostilePid: hostile.pid!, sampler, app, scenario,
    close: async () => {
      app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sampler.stop();
      state.close();
      source.close();
      for (const c of children) c.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Publishes a live companion file as a `gpumem run` supervisor (this process) would, for the trainer on
 * GPU 0: allocated 11 GiB, reserved 14 GiB, peaks 13/15 GiB, one OOM; 40 steps of 250 ms with 100 ms of
 * data wait each, batches of 32.
 */
export function publishCompanion(h: Harness): void {
  const GiB = 1024 ** 3;
  const pid = h.trainerPid;
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid, timeMs: 1, devices: [{ device: 0, uuid: GPU0_UUID, name: null, totalBytes: null }] });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'stats', pid, timeMs: 2, seq: 1, devices: [{
      device: 0, allocatedBytes: 11 * GiB, reservedBytes: 14 * GiB, activeBytes: 11 * GiB, inactiveSplitBytes: 0, requestedBytes: 11 * GiB,
      peakAllocatedBytes: 13 * GiB, peakReservedBytes: 15 * GiB, peakActiveBytes: 13 * GiB, numAllocRetries: 2, numOoms: 1,
    }],
  });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'steps', pid, timeMs: 3, steps: 40, dataWaitMs: 4000, stepMs: 10_000, samples: 32 * 41,
    batchSeen: 32, batchMin: 32, batchMax: 32, batchAsked: null,
  });
  const doc = buildLiveCompanionDoc(state, { pid: process.pid, startTicks: readStartTicks(process.pid) }, Date.now(), (p) => readStartTicks(p));
  const error = writeLiveCompanion(liveCompanionPath({ XDG_RUNTIME_DIR: h.runtimeDir }, process.pid), doc);
  if (error !== null) throw new Error(error);
}
