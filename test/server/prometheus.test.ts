/**
 * A real Prometheus (Debian's package) on loopback scrapes the server every 250 ms and answers PromQL over
 * its HTTP API with the fake driver scenario's numbers. Prometheus asks for OpenMetrics first, so this also
 * proves that format parses in the real scraper.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishCompanion, startHarness, MiB, type Harness } from './harness.js';
import { freePort, pollUntil, PROMETHEUS } from './prometheus-helpers.js';

let h: Harness;
let prom: ChildProcess;
let promBase: string;
let dir: string;
let log = '';
const accepts: string[] = [];

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(expr: string): Promise<VectorResult[]> {
  const res = await fetch(`${promBase}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const doc = (await res.json()) as { status: string; data: { result: VectorResult[] } };
  expect(doc.status).toBe('success');
  return doc.data.result;
}

const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => pollUntil(what, probe, () => log, timeoutMs);

beforeAll(async () => {
  expect(existsSync(PROMETHEUS), `${PROMETHEUS} is missing: apt-get install -y prometheus`).toBe(true);
  h = await startHarness();
  publishCompanion(h);
  const handle = h.app.handle;
  h.app.handle = (req, res) => {
    if (req.url === '/metrics') accepts.push(req.headers.accept ?? '');
    handle(req, res);
  };
  dir = mkdtempSync(join(tmpdir(), 'gpumem-prom-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, [
    'global:', '  scrape_interval: 250ms', '  scrape_timeout: 200ms',
    'scrape_configs:', '  - job_name: gpumem', '    static_configs:', `      - targets: ['127.0.0.1:${h.port}']`, '',
  ].join('\n'));
  const port = await freePort();
  promBase = `http://127.0.0.1:${port}`;
  prom = spawn(PROMETHEUS, [
    `--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  prom.stdout?.on('data', (b: Buffer) => { log += b.toString(); });
  prom.stderr?.on('data', (b: Buffer) => { log += b.toString(); });
  await until('the first successful scrape', async () => {
    const up = await query('up{job="gpumem"}');
    return up[0]?.value[1] === '1' ? true : undefined;
  }, 40_000);
  // The scrape duration is that of the previous scrape: present from the second one on.
  await until('a second scrape', async () => ((await query('gpumem_scrape_duration_seconds')).length > 0 ? true : undefined));
}, 60_000);

afterAll(async () => {
  prom?.kill('SIGTERM');
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a real Prometheus scraping gpumem serve', () => {
  it('answers PromQL with the scenario\'s framebuffer, utilisation and power numbers', async () => {
    const used = await query('DCGM_FI_DEV_FB_USED{gpu="0"}');
    expect(used).toHaveLength(1);
    expect(used[0]!.value[1]).toBe('20000');
    expect(used[0]!.metric).toMatchObject({ UUID: 'GPU-00000000-0000-4000-8000-000000000000', modelName: 'NVIDIA H100 80GB HBM3', hostname: 'testhost', device: 'nvidia0' });
    expect((await query('DCGM_FI_DEV_GPU_UTIL{gpu="0"}'))[0]!.value[1]).toBe('87');
    expect((await query('sum(DCGM_FI_DEV_POWER_USAGE)'))[0]!.value[1]).toBe('481.345');
    expect((await query('DCGM_FI_DEV_SM_CLOCK{gpu="0"}'))[0]!.value[1]).toBe('1755');
    expect((await query('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0"}'))[0]!.value[1]).toBe('987654321');
  });

  it('answers per-process memory by command', async () => {
    const rows = await query('sum by (command) (gpumem_process_gpu_memory_bytes)');
    const byCommand = Object.fromEntries(rows.map((r) => [r.metric.command, Number(r.value[1])]));
    expect(byCommand).toEqual({ sleep: (20_000 - 1024) * MiB, sh: 1024 * MiB });
  });

  it('saw the scrape as OpenMetrics (the format Prometheus asks for first)', async () => {
    const targets = (await (await fetch(`${promBase}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string; lastError: string }> } };
    expect(targets.data.activeTargets.map((t) => [t.health, t.lastError])).toEqual([['up', '']]);
    expect(accepts.length).toBeGreaterThan(0);
    expect(accepts.every((a) => a.startsWith('application/openmetrics-text'))).toBe(true);
    expect(await query('gpumem_scrape_duration_seconds')).toHaveLength(1);
  });

  it('fills the queries of dcgm-exporter\'s dashboard panels (all but tensor-core activity, which NVML lacks)', async () => {
    // The metrics its panels and template variables query, with the $instance/$gpu filters it uses.
    const filters = '{instance=~".*", gpu=~".*"}';
    for (const expr of [
      `DCGM_FI_DEV_GPU_TEMP${filters}`, `avg(DCGM_FI_DEV_GPU_TEMP${filters})`, `DCGM_FI_DEV_POWER_USAGE${filters}`,
      `sum(DCGM_FI_DEV_POWER_USAGE${filters})`, `DCGM_FI_DEV_SM_CLOCK${filters} * 1000000`, `DCGM_FI_DEV_GPU_UTIL${filters}`,
      `DCGM_FI_DEV_FB_USED${filters}`,
    ]) {
      expect((await query(expr)).length, expr).toBeGreaterThan(0);
    }
    const labels = (await (await fetch(`${promBase}/api/v1/label/gpu/values?match[]=DCGM_FI_DEV_GPU_TEMP`)).json()) as { data: string[] };
    expect(labels.data).toEqual(['0', '1']);
  });

  it('answers every query of the shipped gpumem dashboard; the memory panels have data', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana/gpumem-dashboard.json', import.meta.url), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const withData = new Set([
      'GPU memory by process', 'GPU memory by user', 'GPU memory not held by any listed process', 'Scrape duration',
      'PyTorch allocated vs reserved', 'PyTorch peaks', 'Step time', 'Data-wait share of step time', 'Samples per second',
    ]);
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const rows = await query(target.expr.replaceAll('$instance', '.*'));
        // A panel's first query is its main one; a rate over a few scrapes of unchanged counters is NaN, not absent.
        if (withData.has(panel.title) && target === panel.targets[0]) expect(rows.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
      }
    }
    const unheld = await query(dashboard.panels.find((p) => p.title === 'GPU memory not held by any listed process')!.targets[0]!.expr.replaceAll('$instance', '.*'));
    expect(Object.fromEntries(unheld.map((r) => [r.metric.gpu, Number(r.value[1])]))).toEqual({ 0: 0 });
    const steps = await query(dashboard.panels.find((p) => p.title === 'Step time')!.targets[0]!.expr.replaceAll('$instance', '.*'));
    expect(steps.map((r) => [r.metric.pid, r.metric.gpu, Number(r.value[1])])).toEqual([[String(h.trainerPid), '0', 0.25]]);
  });
});

