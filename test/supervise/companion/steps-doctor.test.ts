/**
 * Step findings outside the run's own report: while `gpumem run` supervises a loop (fake torch, fake NVML,
 * real processes), its live companion file carries the step timing, and a `gpumem doctor` or `gpumem
 * diagnose` started beside it says the loop is input-bound, with the figures and the fix — and says nothing
 * of the kind for a loop whose data is ready.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem } from '../helpers/companion-e2e.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

/**
 * A loop on GPU 0: `waitMs` inside the DataLoader per batch of 32, `computeMs` per step, until `go` exists;
 * with `copyAndItem`, each step also copies an 8 MiB pageable tensor to the GPU and calls `.item()` on a CUDA tensor.
 */
function loop(waitMs: number, computeMs: number, go: string, copyAndItem = false): string {
  return [
    'import os, time, torch',
    'held = torch.empty(10 << 20, device="cuda")',
    'folder = os.environ["GPUMEM_TEST_CLAIMS"]',
    'open(os.path.join(folder, "%d-0" % os.getpid()), "w").write(str((40 << 20) + (500 << 20)))',
    'class Batch:',
    '    shape = (32, 3)',
    'def batches():',
    `    while not os.path.exists(${JSON.stringify(go)}):`,
    `        time.sleep(${waitMs / 1000})`,
    '        yield Batch()',
    'for x in torch.utils.data.DataLoader(batches(), batch_size=32, num_workers=2):',
    ...(copyAndItem ? ['    torch.empty(32, 65536).to("cuda")', '    held.item()'] : []),
    `    time.sleep(${computeMs / 1000})`,
  ].join('\n');
}

interface Finding { id: string; title: string; fix: string; evidence: { pids: number[]; gpuIndexes: number[]; details: Record<string, unknown> } }

/** Starts the supervised loop and resolves once its live file shows at least `steps` steps. */
async function supervised(waitMs: number, computeMs: number, steps: number, copyAndItem = false) {
  const t = companionSetup(cleanups);
  // The fake torch's blocking host-to-device copies take 1 ms per MiB.
  t.env.FAKE_TORCH_COPY_MS_PER_MIB = '1';
  const go = join(t.dir, 'go');
  // Before the folder is removed: a failed test must not leave the loop running.
  cleanups.unshift(() => writeFileSync(go, ""));
  const running = gpumem(['run', '--gpus', '0', '--no-history', '--source', 'nvml', '--interval-ms', '20', '--', 'python3', '-c', loop(waitMs, computeMs, go, copyAndItem)], t.env);
  const liveDir = join(t.env.XDG_RUNTIME_DIR as string, 'gpumem');
  const end = Date.now() + 20000;
  const stepsSeen = (): number => {
    if (!existsSync(liveDir)) return 0;
    for (const name of readdirSync(liveDir).filter((n) => n.endsWith('.json'))) {
      try {
        const doc = JSON.parse(readFileSync(join(liveDir, name), 'utf8')) as { processes: Array<{ steps?: { steps: number } | null }> };
        return Math.max(0, ...doc.processes.map((p) => p.steps?.steps ?? 0));
      } catch {
        // Replaced while read: try again.
      }
    }
    return 0;
  };
  while (stepsSeen() < steps && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return { env: t.env, steps: stepsSeen(), stop: async () => { writeFileSync(go, ''); return running; } };
}

describe('step findings in doctor and diagnose while gpumem run supervises the loop', () => {
  it('a loop waiting 30 ms for data in 40 ms steps: diagnose and doctor say input-bound, with the DataLoader settings', async () => {
    const job = await supervised(30, 10, 8);
    expect(job.steps).toBeGreaterThanOrEqual(8);
    const d = await gpumem(['diagnose', '--json', '--window', '0', '--source', 'nvml'], job.env);
    const doctor = await gpumem(['doctor', '--window', '0', '--source', 'nvml'], job.env);
    const r = await job.stop();
    expect(r.code, r.stderr).toBe(0);
    const findings = (JSON.parse(d.stdout) as { findings: Finding[] }).findings;
    const f = findings.find((x) => x.id === 'input-bound');
    expect(f, d.stdout).toBeDefined();
    const share = f?.evidence.details.dataWaitShare as number;
    // 30 of 40 ms by construction; sleeps only ever run long, and a loaded machine stretches both phases.
    expect(share).toBeGreaterThan(0.6);
    expect(share).toBeLessThan(0.9);
    expect(f?.evidence.gpuIndexes).toEqual([0]);
    expect(f?.title).toMatch(/^pid \d+ is input-bound: the loop waited for data \d+% of step time \(3\d\.\d ms of [45]\d\.\d ms per step over \d+ steps\); num_workers 2 on \d+ cores, pin_memory off/);
    // The advice follows the cores the loop may use: more workers where cores are free, else cheaper loading.
    const cores = f?.evidence.details.cpuCount as number;
    expect(f?.fix).toMatch(cores > 2 ? /^raise DataLoader num_workers from 2 \(up to \d+, the free cores\), pin_memory=True, persistent_workers=True/
      : /^the 2 workers already use all \d+ cores: make loading cheaper, pin_memory=True, persistent_workers=True/);
    expect(findings.some((x) => x.id === 'batch-override')).toBe(false);
    expect(doctor.stdout).toContain('is input-bound: the loop waited for data');
    expect(doctor.stdout).toContain('pin_memory=True');
  }, 60_000);

  it('a loop whose data is ready (1 ms wait in 30 ms steps) gets no input-bound finding', async () => {
    const job = await supervised(1, 29, 8);
    const d = await gpumem(['diagnose', '--json', '--window', '0', '--source', 'nvml'], job.env);
    const r = await job.stop();
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(d.stdout) as { findings: Finding[]; accounting: Array<{ pytorch: unknown[] }> };
    // The live file held step timing and was read (the split is there), so the silence is the rule's.
    expect(job.steps).toBeGreaterThanOrEqual(8);
    expect(report.accounting[0]?.pytorch).toHaveLength(1);
    expect(report.findings.filter((x) => x.id === 'input-bound')).toEqual([]);
  }, 60_000);

  it('fed data, but an 8 MiB pageable copy and an .item() every step: blocking-copy (warning) and sync-calls (info), not input-bound', async () => {
    const job = await supervised(1, 20, 8, true);
    expect(job.steps).toBeGreaterThanOrEqual(8);
    const d = await gpumem(['diagnose', '--json', '--window', '0', '--source', 'nvml'], job.env);
    const r = await job.stop();
    expect(r.code, r.stderr).toBe(0);
    const findings = (JSON.parse(d.stdout) as { findings: Array<Finding & { severity: string }> }).findings;
    const ids = findings.filter((f) => ['input-bound', 'blocking-copy', 'sync-calls'].includes(f.id)).map((f) => [f.id, f.severity]);
    expect(ids).toEqual([['blocking-copy', 'warning'], ['sync-calls', 'info']]);
    const copy = findings.find((f) => f.id === 'blocking-copy');
    expect(copy?.evidence.details).toMatchObject({ blockingBytesPerStep: 8 * 1024 * 1024, pageableBytesPerStep: 8 * 1024 * 1024 });
    expect(copy?.fix).toMatch(/^pin_memory=True in the DataLoader and \.to\(device, non_blocking=True\)/);
  }, 60_000);
});
