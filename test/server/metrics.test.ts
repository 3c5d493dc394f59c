/** /metrics over HTTP from the fake driver: dcgm-exporter names and values, gpumem_ metrics, promtool's verdict. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, MiB, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** The value of the one sample of `name` whose labels include all of `labels`. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  const lines = text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  const hits = lines.filter((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  if (hits.length !== 1) throw new Error(`${hits.length} samples of ${name} ${JSON.stringify(labels)}`);
  return Number(hits[0]!.slice(hits[0]!.lastIndexOf(' ') + 1));
}

function promtool(text: string): { status: number | null; out: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('/metrics', () => {
  it('exports the scenario\'s numbers under dcgm-exporter\'s names, units and labels', async () => {
    const res = await fetch(`${h.base}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const gpu0 = { gpu: '0', UUID: 'GPU-00000000-0000-4000-8000-000000000000', pci_bus_id: '00000000:00:00.0', device: 'nvidia0', modelName: 'NVIDIA H100 80GB HBM3', hostname: 'testhost', DCGM_FI_DRIVER_VERSION: '590.48.01' };
    expect(valueOf(text, 'DCGM_FI_DEV_FB_USED', gpu0)).toBe(20_000);
    expect(valueOf(text, 'DCGM_FI_DEV_FB_RESERVED', gpu0)).toBe(479);
    expect(valueOf(text, 'DCGM_FI_DEV_FB_FREE', gpu0)).toBe(81559 - 479 - 20_000);
    expect(valueOf(text, 'DCGM_FI_DEV_GPU_UTIL', gpu0)).toBe(87);
    expect(valueOf(text, 'DCGM_FI_DEV_MEM_COPY_UTIL', gpu0)).toBe(17);
    expect(valueOf(text, 'DCGM_FI_DEV_GPU_TEMP', gpu0)).toBe(58);
    expect(valueOf(text, 'DCGM_FI_DEV_POWER_USAGE', gpu0)).toBe(412.345);
    expect(valueOf(text, 'DCGM_FI_DEV_SM_CLOCK', gpu0)).toBe(1755);
    expect(valueOf(text, 'DCGM_FI_DEV_MEM_CLOCK', gpu0)).toBe(2619);
    expect(valueOf(text, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', gpu0)).toBe(987_654_321);
    expect(text).toContain('# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter');
    expect(valueOf(text, 'DCGM_FI_DEV_FB_USED', { gpu: '1' })).toBe(0);
    expect(text).toContain('# TYPE DCGM_FI_DEV_FB_USED gauge');
  });

  it('exports per-process memory with pid, user, command, container, gpu and UUID', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    expect(valueOf(text, 'gpumem_process_gpu_memory_bytes', { pid: String(h.trainerPid), command: 'sleep', gpu: '0', container: '' })).toBe((20_000 - 1024) * MiB);
    expect(valueOf(text, 'gpumem_process_gpu_memory_bytes', { pid: String(h.hostilePid), command: 'sh' })).toBe(1024 * MiB);
    expect(text).toMatch(/gpumem_process_gpu_memory_bytes\{pid="\d+",user="[^"]+",/);
    expect(valueOf(text, 'gpumem_sample_timestamp_seconds')).toBeGreaterThan(1.7e9);
  });

  it('reports its own duration from the second scrape on', async () => {
    await fetch(`${h.base}/metrics`);
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const seconds = valueOf(text, 'gpumem_scrape_duration_seconds');
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(1);
  });

  it('passes promtool check metrics: no parse error, and no lint complaint but dcgm-exporter\'s own camelCase labels', async () => {
    expect(existsSync('/usr/bin/promtool'), 'promtool is missing: apt-get install -y prometheus').toBe(true);
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const checked = promtool(text);
    expect(checked.out).not.toMatch(/error while linting/);
    // UUID, modelName and Hostname are dcgm-exporter's label names: dashboards key on them, so they stay.
    const complaints = checked.out.split('\n').filter((l) => l.length > 0);
    expect(complaints.length).toBeGreaterThan(0);
    // dcgm-exporter's energy counter has no _total suffix; dashboards query it by that name.
    const dcgm = /^(DCGM_FI_DEV_\w+ label names should be written in 'snake_case' not 'camelCase'|DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter metrics should have "_total" suffix)$/;
    for (const c of complaints) expect(c).toMatch(dcgm);
    expect(checked.status).toBe(3);
    const own = promtool(text.split('\n\n').filter((block) => !block.includes('DCGM_FI_')).join('\n\n'));
    expect(own.out).toBe('');
    expect(own.status).toBe(0);
  });

  it('answers OpenMetrics when asked, ending in # EOF', async () => {
    const res = await fetch(`${h.base}/metrics`, { headers: { Accept: 'application/openmetrics-text; version=1.0.0,text/plain;q=0.5' } });
    expect(res.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    const om = await res.text();
    expect(om.endsWith('# EOF\n')).toBe(true);
    expect(om).toContain('# TYPE gpumem_history_oom_events counter');
    expect(om).not.toContain('\n\n');
    expect(om).toMatch(/\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{[^}]*\} 987654321\n/);
  });

  it('promtool would catch a broken exposition (the check is real)', () => {
    expect(promtool('# TYPE x gauge\nx{a="1" 2\n').status).not.toBe(0);
  });

  it('follows the driver: a new scenario shows in the next scrape', async () => {
    const { writeScenario } = await import('../fake-nvml/scenario.js');
    writeScenario(h.scenarioPath, h.scenario(30_000, 12));
    await h.sampler.sampleNow();
    const text = await (await fetch(`${h.base}/metrics`)).text();
    expect(valueOf(text, 'DCGM_FI_DEV_FB_USED', { gpu: '0' })).toBe(30_000);
    expect(valueOf(text, 'DCGM_FI_DEV_GPU_UTIL', { gpu: '0' })).toBe(12);
  });
});
