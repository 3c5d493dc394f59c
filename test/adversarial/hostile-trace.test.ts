/**
 * `gpumem estimate -- python …` with scripts that do what training scripts do around the step and that the
 * tracer (fake tensors, no GPU) could not run: time the step with CUDA events and synchronize, train with AMP's
 * GradScaler, run on a side stream, call CUDA directly, ask for an allocation no GPU has, or catch such an
 * OOM and go on. Real PyTorch from the .venv test environment, on the CPU.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireTestPython } from '../setup/python-venv.js';
import { expectNoHang, expectNoStackTrace, gpumem, tempDir, type CliResult } from './harness.js';

const tmp = tempDir('gpumem-adv-trace-');
afterAll(tmp.remove);
const TRACE_MS = 120_000;

const BASE = `import torch
model = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def step():
    x = torch.randn(8, 256, device="cuda")
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
`;

async function trace(name: string, body: string, json = true): Promise<CliResult> {
  const file = join(tmp.dir, `${name}.py`);
  writeFileSync(file, `${BASE}${body}`);
  const r = await gpumem(['estimate', ...(json ? ['--json'] : []), '--', requireTestPython(), file], { cwd: tmp.dir, timeoutMs: TRACE_MS, env: { PATH: process.env.PATH } });
  expectNoHang(r, name);
  expectNoStackTrace(r, name);
  return r;
}

interface Traced {
  steps: number;
  peakRequestedBytes: number;
  byCategory: Record<string, number>;
}

/** Weights, gradients and the batch of the base model: what any of these scripts must trace to. */
const WEIGHTS = (256 * 256 + 256) * 4;

describe('estimate -- python: CUDA calls around the step', () => {
  it('CUDA events and synchronize around each step (timing code) trace like the bare step', async () => {
    const r = await trace('gpu_event', `start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
for _ in range(3):
    start.record()
    step()
    end.record()
    torch.cuda.synchronize()
    torch.cuda.current_stream().synchronize()
    print("step ms", start.elapsed_time(end))
`);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as Traced;
    expect(t.steps).toBe(2);
    expect(t.byCategory.weights).toBe(WEIGHTS);
  }, TRACE_MS);

  it('a side stream (torch.cuda.Stream, torch.cuda.stream) traces like the bare step', async () => {
    const r = await trace('side_stream', `s = torch.cuda.Stream()
with torch.cuda.stream(s):
    for _ in range(3):
        step()
`);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Traced).byCategory.weights).toBe(WEIGHTS);
  }, TRACE_MS);

  for (const [what, make] of [['torch.amp.GradScaler("cuda")', 'torch.amp.GradScaler("cuda")'], ['torch.cuda.amp.GradScaler()', 'torch.cuda.amp.GradScaler()']] as const) {
    it(`AMP with ${what}: the optimizer steps as on a GPU with finite gradients, and both steps are traced`, async () => {
      const r = await trace('amp', `import warnings
warnings.simplefilter("ignore")
scaler = ${make}
for _ in range(3):
    x = torch.randn(8, 256, device="cuda")
    with torch.autocast("cuda"):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
`);
      expect(r.code, r.stderr).toBe(0);
      const t = JSON.parse(r.stdout) as Traced;
      expect(t.steps).toBe(2);
      expect(t.byCategory.weights).toBe(WEIGHTS);
      // Gradients exist only when the optimizer ran over them (a skipped step traces none at all).
      expect(t.byCategory.gradients).toBeGreaterThanOrEqual(256 * 256 * 4);
    }, TRACE_MS);
  }

  it('a call that needs the real driver is named with its line and source, in one line', async () => {
    const r = await trace('direct', `torch.cuda.ipc_collect()
for _ in range(3):
    step()
`, false);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gpumem: error: tracing .* stopped: direct\.py:9 calls CUDA directly \(torch\.cuda\.ipc_collect, in `torch\.cuda\.ipc_collect\(\)`\), which needs a real GPU/);
    expect(r.stderr).not.toMatch(/Found no NVIDIA driver/);
  }, TRACE_MS);
});

describe('estimate -- python: allocations no GPU has', () => {
  it('a 4 EiB allocation ends the trace as CUDA would, with the size, not as a malformed trace', async () => {
    const r = await trace('huge', `x = torch.empty(2**62, dtype=torch.uint8, device="cuda")
for _ in range(3):
    step()
`, false);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/stopped: OutOfMemoryError: CUDA out of memory\. Tried to allocate 4\.00 EiB \(4611686018427387904 bytes\): no GPU has that much memory/);
    expect(r.stderr).not.toMatch(/trace line/);
  }, TRACE_MS);

  it('an OOM the script catches is not counted: the peak is the step\'s, not 4 PiB', async () => {
    const r = await trace('caught', `try:
    big = torch.empty(4 * 2**50, dtype=torch.uint8, device="cuda")
except torch.OutOfMemoryError:
    print("caught")
for _ in range(3):
    step()
`);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as Traced;
    expect(t.peakRequestedBytes).toBeLessThan(64 * 1024 * 1024);
    expect(t.byCategory.weights).toBe(WEIGHTS);
  }, TRACE_MS);
});
