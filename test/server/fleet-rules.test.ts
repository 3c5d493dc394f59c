/** The shipped Prometheus rules pass promtool's checks and its unit tests (docs/prometheus/gpumem-alerts.test.yml). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROMTOOL } from './prometheus-helpers.js';

const DOCS = new URL('../../docs/prometheus/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'gpumem-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function promtool(args: string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the shipped Prometheus rules', () => {
  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', 'gpumem-rules.yml', 'gpumem-alerts.yml'], DOCS);
    expect(r.out).toContain('SUCCESS: 8 rules found');
    expect(r.out).toContain('SUCCESS: 4 rules found');
    expect(r.status).toBe(0);
  });

  it('pass promtool test rules: each alert fires when it should and stays quiet when it should not', () => {
    const r = promtool(['test', 'rules', 'gpumem-alerts.test.yml'], DOCS);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('the unit tests can fail: an alert with a threshold that never trips fails them', () => {
    for (const f of ['gpumem-rules.yml', 'gpumem-alerts.test.yml']) copyFileSync(join(DOCS, f), join(dir, f));
    writeFileSync(join(dir, 'gpumem-alerts.yml'), readFileSync(join(DOCS, 'gpumem-alerts.yml'), 'utf8').replace('> 0.95', '> 0.99'));
    const r = promtool(['test', 'rules', 'gpumem-alerts.test.yml'], dir);
    expect(r.out).toContain('alertname: GpumemRankNearGpuMemory');
    expect(r.status).not.toBe(0);
  });
});
