/**
 * The OOM forecast under `gpumem run` (fake torch, fake NVML, real processes): a loop that keeps 16 MiB more every
 * step is caught with the step it will run out at — and the fake allocator then really runs out at that step; a
 * flat loop raises nothing; an evaluation every 20 steps is recognised with its headroom, and warned about when a
 * leak will make the next one too big.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem } from '../helpers/companion-e2e.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

interface Forecast {
  device: number; step: number; limitBytes: number | null; usualPeakBytes: number | null; warnings: string[];
  growth: {
    bytesPerStep: number; oomAtStep: number | null; stepsLeft: number | null;
    sites?: { fromStep: number; toStep: number; leftGrewBytes: number; sites: Array<{ site: string; bytes: number; blocks: number }> } | null;
  } | null;
  spikes: { everySteps: number; nextStep: number; peakBytes: number; nextPeakBytes: number; headroomBytes: number | null; failsAtStep: number | null } | null;
}
interface Report {
  attempts: Array<{
    findings: Array<{ id: string; title: string }>;
    plugins: { companion: { processes: Array<{ forecast?: Forecast[]; devices: Array<{ maxPeakAllocatedBytes: number }> }> } };
  }>;
}

/**
 * A training loop for the fake torch: each step allocates a 64 MiB activation (freed), keeps `leakMiB` MiB, sleeps
 * `stepMs`, and steps the optimizer; every `evalEvery` steps an evaluation holds `evalMiB` MiB for a moment. It prints
 * the step at which an OOM stops it.
 */
function loop(o: { steps: number; leakMiB: number; evalEvery?: number; evalMiB?: number; stepMs?: number }): string {
  return [
    'import time, torch',
    'MiB = 1 << 20',
    'model = torch.nn.Module(); model.add_parameter(16 * MiB // 4)',
    'opt = torch.optim.SGD(model.parameters())',
    'kept = []',
    `for step in range(1, ${o.steps + 1}):`,
    '    try:',
    '        x = torch.empty(64 * MiB // 4, device="cuda")',
    `        if ${o.leakMiB}: kept.append(torch.empty(${o.leakMiB} * MiB // 4, device="cuda"))`,
    '        del x',
    `        time.sleep(${(o.stepMs ?? 5) / 1000})`,
    '        opt.step()',
    `        if ${o.evalEvery ?? 0} and step % ${o.evalEvery ?? 1} == 0:`,
    `            e = torch.empty(${o.evalMiB ?? 0} * MiB // 4, device="cuda"); del e`,
    '    except torch.OutOfMemoryError:',
    '        print("OOM at step", step, flush=True); break',
  ].join('\n');
}

async function run(code: string, fraction: number, extra: string[] = [], extraEnv: Record<string, string> = {}): Promise<{ report: Report; stderr: string; stdout: string; forecast: Forecast | undefined }> {
  const { env } = companionSetup(cleanups);
  // An 8 GiB fake GPU capped at `fraction`: the fake allocator refuses beyond it, and the forecast measures against it.
  const r = await gpumem(['run', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50', '--memory-fraction', String(fraction), ...extra,
    '--', 'python3', '-c', code], { ...env, FAKE_TORCH_TOTAL_BYTES: String(8 * GiB), ...extraEnv });
  expect(r.code, r.stderr).toBe(0);
  const json = r.stdout.slice(r.stdout.indexOf('{'));
  const report = JSON.parse(json) as Report;
  return { report, stderr: r.stderr, stdout: r.stdout, forecast: report.attempts[0]?.plugins.companion.processes[0]?.forecast?.[0] };
}

describe('OOM forecast under gpumem run (fake torch)', () => {
  it('a loop keeping 16 MiB a step: warned with the step it runs out at, and it does run out there', async () => {
    const { stderr, stdout, forecast, report } = await run(loop({ steps: 1000, leakMiB: 16, stepMs: 10 }), 0.5);
    const warning = /warning: OOM forecast: pid \d+ cuda:0(?: \(GPU \d\))? runs out of memory at step (\d+), (\d+) steps from now/.exec(stderr);
    expect(warning, stderr).not.toBeNull();
    const oomAt = Number(/OOM at step (\d+)/.exec(stdout)?.[1]);
    // The forecast said it early; the allocator refused within a step of it (4 GiB limit, 16 MiB params, 64 MiB activation).
    expect(Math.abs(Number(warning?.[1]) - oomAt)).toBeLessThanOrEqual(1);
    expect(Number(warning?.[2])).toBeGreaterThan(20);
    expect(forecast?.limitBytes).toBe(4 * GiB);
    expect(forecast?.growth?.bytesPerStep).toBeCloseTo(16 * MiB, 0);
    expect(forecast?.warnings).toEqual(['growth']);
    expect(report.attempts[0]?.findings.map((f) => f.id)).toContain('oom-forecast');
  }, 60_000);

  it('with allocation history recorded, the leak names what grows: the line that keeps the tensors, not the freed activation', async () => {
    const { stderr, forecast } = await run(loop({ steps: 1000, leakMiB: 16, stepMs: 10 }), 0.5, ['--snapshot-on-oom'], { FAKE_TORCH_SNAPSHOT_BLOCKS: '1' });
    // Snapshots at steps 32, 64, 128 (the live line shows whichever pair arrived first); the run stops at its OOM near step 250, so the latest pair is 64 → 128.
    expect(forecast?.growth?.sites).toEqual({
      fromStep: 64, toStep: 128, leftGrewBytes: 64 * 16 * MiB, sites: [{ site: '<string>:9 in <module>', bytes: 64 * 16 * MiB, blocks: 64 }],
    });
    expect(stderr).toMatch(/gpumem: forecast: pid \d+ cuda:0: what grows \(steps (32 → 64|64 → 128)\): <string>:9 in <module> \+(512\.00 MiB in 32|1\.00 GiB in 64) blocks$/m);
  }, 60_000);

  it('--no-step-memory: the leaking loop is not recorded, so no forecast and no warning (and its peaks are the sampler\'s)', async () => {
    const { stderr, report } = await run(loop({ steps: 60, leakMiB: 16 }), 0.5, ['--no-step-memory']);
    expect(stderr).not.toMatch(/OOM forecast/);
    const p = report.attempts[0]?.plugins.companion.processes[0];
    expect(p?.forecast).toBeUndefined();
    // Never reset: the allocator's own peak over the run, 16 MiB parameters + 60 × 16 MiB kept + the 64 MiB activation.
    expect(p?.devices[0]?.maxPeakAllocatedBytes).toBe(16 * MiB + 60 * 16 * MiB + 64 * MiB);
  }, 60_000);

  it('the same loop without the leak: no forecast line, no warning, no finding, and the peaks still exact', async () => {
    const { stderr, forecast, report } = await run(loop({ steps: 150, leakMiB: 0 }), 0.5);
    expect(stderr).not.toMatch(/OOM forecast|gpumem: forecast:/);
    expect(forecast?.growth).toBeNull();
    expect(forecast?.spikes).toBeNull();
    expect(forecast?.warnings).toEqual([]);
    expect(forecast?.step).toBe(150);
    // 16 MiB of parameters plus the 64 MiB activation, whatever step the sampler happened to see.
    expect(forecast?.usualPeakBytes).toBe(80 * MiB);
    expect(report.attempts[0]?.plugins.companion.processes[0]?.devices[0]?.maxPeakAllocatedBytes).toBe(80 * MiB);
    expect(report.attempts[0]?.findings.map((f) => f.id)).not.toContain('oom-forecast');
  }, 60_000);

  it('an evaluation every 20 steps that fits: recognised with its next step and headroom, no warning', async () => {
    const { stderr, forecast } = await run(loop({ steps: 130, leakMiB: 0, evalEvery: 20, evalMiB: 1024 }), 0.5);
    // The evaluation after step 20 falls into step 21's peak: 16 MiB of parameters + 1 GiB.
    expect(forecast?.spikes).toMatchObject({ everySteps: 20, nextStep: 141, peakBytes: 16 * MiB + GiB, headroomBytes: 4 * GiB - 16 * MiB - GiB });
    expect(forecast?.growth).toBeNull();
    expect(forecast?.warnings).toEqual([]);
    expect(stderr).not.toMatch(/warning: OOM forecast/);
  }, 60_000);

  it('an evaluation every 20 steps with a slow leak: warned, before it fails, which later evaluation will not fit', async () => {
    const { stderr, stdout } = await run(loop({ steps: 400, leakMiB: 4, evalEvery: 20, evalMiB: 3072, stepMs: 10 }), 0.5);
    const warning = /warning: OOM forecast: .*the spike due at step (\d+) \(every 20 steps.*\(the next, at step (\d+), still fits/.exec(stderr);
    expect(warning, stderr).not.toBeNull();
    const oomAt = Number(/OOM at step (\d+)/.exec(stdout)?.[1]);
    // The evaluation runs after optimizer step N and counts in step N + 1: the spike due at N + 1 is the one that failed.
    expect(Number(warning?.[1])).toBe(oomAt + 1);
    expect(Number(warning?.[2])).toBeLessThan(oomAt);
    // Said before the OOM happened, not after.
    expect(stderr.indexOf('the spike due at step')).toBeLessThan(stderr.indexOf('gpumem: OOM in pid'));
  }, 60_000);

  it('the same loop with spike warnings off and growth warnings off: nothing is warned', async () => {
    const { stderr, forecast } = await run(loop({ steps: 400, leakMiB: 4, evalEvery: 20, evalMiB: 3072, stepMs: 10 }), 0.5, ['--forecast-steps', '0', '--no-spike-warning']);
    expect(stderr).not.toMatch(/warning: OOM forecast/);
    expect(forecast?.spikes?.failsAtStep).not.toBeNull();
  }, 60_000);
});
