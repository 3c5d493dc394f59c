/**
 * `gpumem serve` on 8 GPUs × 64 processes (the fake libnvidia-ml.so.1, real sleeping pids):
 * - /metrics server time: building the exposition from the newest sample, beside JSON-encoding the same
 *   sample as /api/v1/status does (the peer); target ≤ 5 ms.
 * - the page's first render in headless Chromium (navigation to GPU cards and both charts drawn), beside
 *   loading the page shell alone (the peer); target ≤ 1 s.
 * - CPU of a running `gpumem serve` process over a minute with one open page and one scrape every 15 s,
 *   beside the same server with nothing connected (the peer); target ≤ 0.5 % of a core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { statusJson } from '../src/core/documents/status.js';
import { LiveSampler } from '../src/orchestrate/index.js';
import { MetricsExporter, ServerState } from '../src/server/index.js';
import { openSource } from '../src/sources/index.js';
import { buildFakeNvml, fakeH100, fakeNvmlEnv, fakeNvmlLib, writeScenario, type FakeDevice } from '../test/fake-nvml/scenario.js';
import { median, timeEach } from './timing.js';
import { requireRealCosts } from './fake-costs.js';
import { cpuSeconds } from './proc-cpu.js';
import { startSleepers, type Sleepers } from './sleepers.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const MiB = 1024 * 1024;
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const CPU_WINDOW_MS = 60_000;

const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** utime + stime of a process, in seconds. */

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', '--readonly'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`gpumem serve exited with ${code}`)));
  });
  return { child, base };
}

/** Where a first render's time went, in ms from navigation start (the page's own marks). */
interface Phases { html: number; scripts: number; dom: number; message: number; render: number; requests: number }

const PHASES = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
  const scripts = res.filter((r) => r.initiatorType === 'script').map((r) => r.responseEnd);
  return { html: nav.responseEnd, scripts: Math.max(0, ...scripts), dom: nav.domContentLoadedEventEnd, message: mark('gpumem-first-message'), render: mark('gpumem-first-render'), requests: res.length + 1 };
})()`;

/** Bytes of the first server-sent event a new page receives. */
async function firstEventBytes(base: string): Promise<number> {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/v1/events`, { signal: controller.signal });
  const reader = res.body!.getReader();
  let bytes = 0;
  let text = '';
  while (!text.includes('\n\n')) {
    const chunk = (await reader.read()).value!;
    bytes += chunk.byteLength;
    text += new TextDecoder().decode(chunk);
  }
  controller.abort();
  return bytes;
}

async function cpuPercent(pid: number, during: () => Promise<void>): Promise<number> {
  const before = cpuSeconds(pid);
  const t0 = Date.now();
  await during();
  return ((cpuSeconds(pid) - before) / ((Date.now() - t0) / 1000)) * 100;
}

export async function run(): Promise<void> {
  requireRealCosts();
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-serve-'));
  let sleepers: Sleepers | null = null;
  const servers: ChildProcess[] = [];
  try {
    sleepers = await startSleepers(GPUS * PROCS_PER_GPU);
    const pids = sleepers.pids;
    const devices: FakeDevice[] = Array.from({ length: GPUS }, (_, g) =>
      fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: PROCS_PER_GPU * 100 * MiB },
        processes: pids.slice(g * PROCS_PER_GPU, (g + 1) * PROCS_PER_GPU).map((pid) => ({ pid, usedBytes: 100 * MiB })),
      }),
    );
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices });
    process.env.GPUMEM_FAKE_NVML_SCENARIO = scenario;

    // 1. /metrics server time, in this process.
    const source = await openSource({ source: 'nvml', nvmlLib: fakeNvmlLib('590'), env: {} });
    const sampler = new LiveSampler(source, { intervalMs: 60_000 });
    await sampler.start();
    const state = new ServerState({ sampler, env: { XDG_RUNTIME_DIR: dir }, dbPath: null });
    const snapshot = state.snapshot()!;
    if (snapshot.sample.processes.length !== GPUS * PROCS_PER_GPU) throw new Error(`expected ${GPUS * PROCS_PER_GPU} processes, got ${snapshot.sample.processes.length}`);
    const exporter = new MetricsExporter();
    const body = (await exporter.render(snapshot, false)).body;
    const metricsMs = median(await timeEach(300, () => exporter.render(snapshot, false)));
    const openMetricsMs = median(await timeEach(300, () => exporter.render(snapshot, true)));
    const jsonMs = median(await timeEach(300, async () => JSON.stringify(statusJson(snapshot.sample))));
    await sampler.stop();
    source.close();
    process.stdout.write(
      `/metrics, ${GPUS} GPUs × ${PROCS_PER_GPU} processes (${body.split('\n').length} lines, ${(body.length / 1024).toFixed(0)} KiB):\n` +
        `  text format     ${fmt(metricsMs)}  (${(metricsMs / 5).toFixed(2)}× the 5 ms budget)\n` +
        `  OpenMetrics     ${fmt(openMetricsMs)}\n` +
        `  peer: /api/v1/status JSON of the same sample ${fmt(jsonMs)}  → metrics/json = ${(metricsMs / jsonMs).toFixed(2)}×\n`,
    );

    // 2. First render in Chromium, against a real `gpumem serve`.
    const env = { ...fakeNvmlEnv('590', scenario), XDG_RUNTIME_DIR: dir, XDG_DATA_HOME: dir };
    const server = await startServer(env);
    servers.push(server.child);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    try {
      const renders: number[] = [];
      const shells: number[] = [];
      const phases: Phases[] = [];
      for (let k = 0; k < 5; k++) {
        const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        const t0 = Date.now();
        await page.goto(server.base);
        await page.waitForSelector('#chart-memory canvas');
        await page.waitForSelector('#chart-util canvas');
        // A function, not a string: the page's Content-Security-Policy refuses eval, which a string predicate needs when polled.
        await page.waitForFunction(([gpus, rows]) => {
          const doc = (globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }).document;
          return doc.querySelectorAll('.gpu').length === gpus && doc.querySelectorAll('#processes tbody tr').length === rows;
        }, [GPUS, GPUS * PROCS_PER_GPU]);
        renders.push(Date.now() - t0);
        phases.push(await page.evaluate(PHASES));
        const t1 = Date.now();
        await page.goto(`${server.base}/api/v1/server`);
        shells.push(Date.now() - t1);
        await page.close();
      }
      const renderMs = median(renders);
      const shellMs = median(shells);
      const firstFrame = await firstEventBytes(server.base);
      const assetBytes = (await Promise.all(['/', '/assets/app.js', '/assets/app.css', '/assets/uPlot.iife.min.js', '/assets/uPlot.min.css'].map(async (p) => (await (await fetch(server.base + p)).arrayBuffer()).byteLength))).reduce((a, b) => a + b, 0);
      const ph = (key: keyof Phases): string => fmt(median(phases.map((x) => x[key])));
      process.stdout.write(
        `page first render (8 GPU cards, 512 process rows, both charts): median of 5 ${fmt(renderMs)}  (${(renderMs / 1000).toFixed(2)}× the 1 s budget)\n` +
          `  in the page (medians, ms from navigation start): page file in ${ph('html')}, scripts in ${ph('scripts')}, DOMContentLoaded ${ph('dom')}, ` +
          `first event ${ph('message')}, drawn ${ph('render')}; ${phases[0]!.requests} requests, files ${(assetBytes / 1024).toFixed(0)} KiB, first event ${(firstFrame / 1024).toFixed(0)} KiB\n` +
          `  peer: loading one small JSON document in the same browser ${fmt(shellMs)}  → ${(renderMs / shellMs).toFixed(1)}×\n`,
      );

      // 3. CPU of the server process: nothing connected (peer), then one open page and a scrape every 15 s.
      await sleep(3000);
      const idle = await cpuPercent(server.child.pid!, () => sleep(CPU_WINDOW_MS));
      const page = await browser.newPage();
      await page.goto(server.base);
      await page.waitForSelector('.gpu');
      const busy = await cpuPercent(server.child.pid!, async () => {
        for (let t = 0; t < CPU_WINDOW_MS; t += 15_000) {
          await (await fetch(`${server.base}/metrics`)).text();
          await sleep(15_000);
        }
      });
      process.stdout.write(
        `server CPU over ${CPU_WINDOW_MS / 1000} s (defaults: a sample every 2 s while a page is open, every 10 s while none is):\n` +
          `  one open page + one scrape per 15 s  ${busy.toFixed(2)} % of a core  (${(busy / 0.5).toFixed(2)}× the 0.5 % budget)\n` +
          `  peer: nothing connected              ${idle.toFixed(2)} % of a core  → ${(busy / Math.max(idle, 0.01)).toFixed(2)}×\n`,
      );
    } finally {
      await browser.close();
    }
  } finally {
    for (const s of servers) s.kill('SIGTERM');
    sleepers?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
