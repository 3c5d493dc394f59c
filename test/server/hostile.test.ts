/**
 * Outside strings on the server's outputs: a process whose argv[0] holds quotes, backslashes and a newline
 * stays one well-formed label on /metrics (promtool parses it), and random request paths, queries and
 * headers get an answer with a status, never a crash or a hang.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeScenario } from '../fake-nvml/scenario.js';
import { MiB, startHarness, type Harness } from './harness.js';

const ARGV0 = 'ev"il\\name\n# TYPE x counter\nx 1';
let h: Harness;
let odd: ChildProcess;

beforeAll(async () => {
  h = await startHarness();
  odd = spawn('/bin/sleep', ['60'], { argv0: ARGV0, stdio: 'ignore' });
  const scenario = h.scenario(20_000, 87);
  scenario.devices[0]!.processes!.push({ pid: odd.pid!, usedBytes: 5 * MiB });
  writeScenario(h.scenarioPath, scenario);
  await h.sampler.sampleNow();
});
afterAll(async () => {
  odd?.kill('SIGKILL');
  await h?.close();
});

describe('hostile strings and requests', () => {
  it('escapes a hostile program name into one label that promtool parses', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('gpumem_process_gpu_memory_bytes') && l.includes(`pid="${odd.pid}"`));
    expect(line).toBe(`gpumem_process_gpu_memory_bytes{pid="${odd.pid}",user="${line!.match(/user="([^"]*)"/)![1]}",command="ev\\"il\\\\name\\n# TYPE x counter\\nx 1",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="GPU-00000000-0000-4000-8000-000000000000"} ${5 * MiB}`);
    expect(text).not.toMatch(/^x 1$/m);
    const own = text.split('\n\n').filter((block) => !block.includes('DCGM_FI_')).join('\n\n');
    const r = spawnSync('promtool', ['check', 'metrics'], { input: own, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toBe('');
  });

  it('answers any path, query and Accept header with a status and no crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/', '/metrics', '/api/v1/', '/api/v1/runs/', '/api/v1/live', '/api/v1/processes/', '/assets/'),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 60 }),
        async (prefix, tail, query, accept) => {
          const url = `${h.base}${prefix}${encodeURIComponent(tail)}?${encodeURIComponent(query)}=${encodeURIComponent(tail)}`;
          const res = await fetch(url, { headers: { Accept: accept.replace(/[^\x20-\x7e]/g, '') } });
          await res.arrayBuffer();
          expect(res.status).toBeGreaterThanOrEqual(200);
          expect(res.status).toBeLessThan(500);
          expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
        },
      ),
      { numRuns: 60 },
    );
  });
});
