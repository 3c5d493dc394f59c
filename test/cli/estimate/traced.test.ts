/**
 * `gpumem estimate -- python …` end to end with real PyTorch (fake tensors, no GPU): a transformers script
 * and a torchvision script, a step function through --entry, and the mistakes a user makes. Needs the
 * .venv/ test environment (test/setup/python-venv.ts); without it every test here fails and says how to
 * install it.
 */
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { estimate, traced, TIMEOUT_MS, type Traced } from './traced-helpers.js';

describe('gpumem estimate -- python … (real torch, fake tensors)', () => {
  const python = (): string => requireTestPython();

  it('traces a transformers Llama script built from a shipped config: weights, gradients and AdamW state to the byte', async () => {
    const t = await traced(['--gpu', 'T4-16GB', '--', python(), 'train_llama.py', '--batch-size', '2', '--seq', '128']);
    // Parameters of tiny_llama/config.json counted from the architecture, not from the tracer:
    // embeddings and an untied head 2·V·H; per layer q,o H·H, k,v H·(H/heads·kv) each, MLP 3·H·I, 2 norms H.
    const [V, H, I, L, kvDim] = [1024, 256, 688, 4, 128];
    const params = 2 * V * H + L * (2 * H * H + 2 * H * kvDim + 3 * H * I + 2 * H) + H;
    expect(params).toBe(3_426_560);
    // Two rotary buffers (inv_freq and original_inv_freq, head_dim/2 fp32 values each) move with the weights.
    expect(t.byCategory.weights).toBe(params * 4 + 2 * (H / 4 / 2) * 4);
    expect(t.byCategory['optimizer-state']).toBe(2 * params * 4);
    expect(t.peakPhase).toBe('optimizer'); // AdamW's foreach temporaries on top of weights, grads and states
    expect(t.byCategory.gradients).toBe(params * 4);
    expect(t.steps).toBe(2);
    expect(t.byCategory.workspace).toBe(8 * 1024 * 1024 + 128 * 1024); // T4: Turing, 8.125 MiB
    expect(t.peakRequestedBytes).toBe(Object.values(t.byCategory).reduce((a, b) => a + b, 0));
    // The caching allocator rounds every request up (512 B at least) and reserves whole segments.
    expect(t.peakAllocatedBytes).toBeGreaterThanOrEqual(t.peakRequestedBytes);
    expect(t.peakReservedBytes).toBeGreaterThanOrEqual(t.peakAllocatedBytes!);
    expect(t.peakReservedBytes! % (2 * 1024 * 1024)).toBe(0); // segments are 2 MiB multiples
    expect(t.nvidiaSmiBytes).toBe(t.peakReservedBytes! + t.contextBytes);
    expect(t.fit?.fits).toBe(true);
  }, TIMEOUT_MS);

  it('traces a torchvision ResNet-18 script: SGD momentum buffers equal the weights, activations are module-attributed', async () => {
    const t = await traced(['--', python(), 'train_resnet.py']);
    const weights = 11_181_642 * 4; // torchvision resnet18(num_classes=10) parameters, fp32
    // BatchNorm buffers: running mean and var (fp32) per channel, plus one int64 counter per BN layer.
    const bnChannels = 64 + 64 * 4 + (128 * 4 + 128) + (256 * 4 + 256) + (512 * 4 + 512);
    expect(t.byCategory.weights).toBe(weights + bnChannels * 2 * 4 + 20 * 8);
    expect(t.byCategory['optimizer-state']).toBe(weights);
    // zero_grad() comes after the forward pass here, so step 1's gradients are alive at step 2's peak.
    expect(t.byCategory.gradients).toBe(weights);
    expect(t.byCategory.activations).toBeGreaterThan(0);
    expect(t.byModule.some((m) => m.module === 'conv1' || m.module === 'bn1')).toBe(true);
  }, TIMEOUT_MS);

  it('traces a step function given by --entry, replayed with the allocator settings given', async () => {
    const t = await traced(['--python', python(), '--entry', 'make_step:make_step', '--gpu', 'H100-80GB', '--alloc-conf', 'expandable_segments:True']);
    // Expandable segments: one growing segment per pool instead of one per large request.
    expect(t.segmentCount).toBeLessThanOrEqual(2);
    const params = 512 * 2048 * 2 + 2048 + 512;
    expect(t.byCategory.weights).toBe(params * 4);
    expect(t.byCategory.gradients).toBe(params * 4);
    expect(t.byCategory['optimizer-state']).toBe(2 * params * 4);
    expect(t.byCategory.workspace).toBe(32 * 1024 * 1024); // Hopper
  }, TIMEOUT_MS);

  it('finds the largest batch of a {batch} command by traced probes, and reports the breakdown at it', async () => {
    const t = await traced(['--gpu', '1GiB', '--', python(), 'train_llama.py', '--batch-size', '{batch}', '--seq', '128']);
    const search = t.batchSearch!;
    expect(search.maxBatch).toBeGreaterThan(2);
    expect(search.exact).toBe(true);
    const at = (b: number) => search.probes.find((p) => p.batch === b);
    expect(at(search.maxBatch)?.fits).toBe(true);
    expect(at(search.maxBatch + 1)?.fits).toBe(false);
    // Every probe's verdict agrees with its own bytes against the budget, and bytes grow with the batch.
    const sorted = [...search.probes].sort((a, b) => a.batch - b.batch);
    for (const p of sorted) expect(p.fits).toBe(p.deviceBytes <= t.fit!.budgetBytes);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.deviceBytes).toBeGreaterThanOrEqual(sorted[i - 1]!.deviceBytes);
    expect(t.command).toContain(String(search.maxBatch));
    expect(t.nvidiaSmiBytes).toBe(at(search.maxBatch)!.deviceBytes);
  }, 7 * TIMEOUT_MS);

  it('traces the two-stage fine-tune per stage: the frozen stage fits, full fine-tuning breaks, the fix is a smaller batch with accumulation', async () => {
    const r = await estimate(['--json', '--gpu', '1.5GiB', '--stages', 'frozen full', '--batch', '8', '--', python(), 'train_two_stage.py', '--stage', '{stage}', '--batch', '{batch}']);
    expect(r.code).toBe(1); // a stage breaks
    const j = JSON.parse(r.stdout) as {
      kind: string;
      stages: Array<{ name: string; fits: boolean; report: Traced; growth: Array<{ category: string; deltaBytes: number }> }>;
      fix: { stage: string; batch: number; accumulation: number; effectiveBatch: number; search: NonNullable<Traced['batchSearch']> };
    };
    expect(j.kind).toBe('trace-stages');
    const [frozen, full] = j.stages;
    expect([frozen!.name, frozen!.fits, full!.name, full!.fits]).toEqual(['frozen', true, 'full', false]);
    // Frozen: only the 21-class head trains (2048·21 + 21 parameters), so AdamW keeps 2 × 4 B for each.
    expect(frozen!.report.byCategory['optimizer-state']).toBe(2 * 4 * (2048 * 21 + 21));
    // The backbone's saved activations are what full fine-tuning adds most.
    expect(full!.growth[0]!.category).toBe('activations');
    expect(j.fix.stage).toBe('full');
    expect(j.fix.batch).toBeLessThan(8);
    expect(j.fix.batch * j.fix.accumulation).toBeGreaterThanOrEqual(8);
    const chosen = j.fix.search.probes.find((p) => p.batch === j.fix.batch)!;
    expect(chosen.fits).toBe(true);
    expect(chosen.deviceBytes).toBeLessThan(full!.report.nvidiaSmiBytes);
    // The stage that fits gets no fixes; the one that breaks gets every fix, best first, each below its peak
    // or equal to it, and the fixes that drop training state (LoRA, paged) cannot be worse than 8-bit state.
    expect(frozen!.report.fixes).toBeNull();
    const fixes = full!.report.fixes!;
    const bytes = (k: string): number => fixes.find((f) => f.kind === k)!.deviceBytes;
    expect(fixes.map((f) => f.deviceBytes)).toEqual([...fixes.map((f) => f.deviceBytes)].sort((a, b) => a - b));
    for (const f of fixes) expect(f.deviceBytes).toBeLessThanOrEqual(full!.report.nvidiaSmiBytes);
    expect(bytes('optimizer-paged')).toBeLessThanOrEqual(bytes('optimizer-8bit'));
    expect(bytes('zero-3')).toBeLessThanOrEqual(bytes('zero-2'));
    expect(bytes('zero-2')).toBeLessThanOrEqual(bytes('zero-1'));
    // Checkpointing is numbered by a second trace with torch.utils.checkpoint around ResNet-50's 3 + 4 + 6 + 3
    // bottlenecks: below the full stage's figure, never below what persists (weights, gradients, AdamW state).
    const ckpt = fixes.find((f) => f.kind === 'activation-checkpointing')!;
    expect(ckpt.basis).toBe('traced');
    expect(ckpt.what).toContain('16 Bottleneck blocks');
    expect(ckpt.deviceBytes).toBeLessThan(full!.report.nvidiaSmiBytes);
    const c = full!.report.byCategory;
    expect(ckpt.deviceBytes).toBeGreaterThan(full!.report.contextBytes + c.weights! + c.gradients! + c['optimizer-state']!);
  }, 8 * TIMEOUT_MS);

  it.each([
    ['never_steps.py', [], /before its first training step/],
    ['missing_package.py', [], /ModuleNotFoundError: No module named 'gpumem_no_such_package_for_tests' \(at missing_package\.py:2\)/],
    ['hangs.py', ['--trace-timeout', '5'], /did not finish 2 training step\(s\) within 5 s/],
  ])('%s: one error line and a hint, no stack trace', async (script, extra, message) => {
    const r = await estimate([...extra, '--', python(), script]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(message);
    expect(lines[1]).toMatch(/^hint: /);
    expect(r.stderr).not.toMatch(/Traceback|at .*\.js:\d+/);
  }, TIMEOUT_MS);

  it('refuses bad allocator settings before tracing anything', async () => {
    const r = await estimate(['--alloc-conf', 'max_split_size_mb:banana', '--', 'gpumem-no-such-program']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/max_split_size_mb/);
    expect(r.stderr).not.toMatch(/ENOENT/);
  });

  it('refuses a command that does not exist, with the status a shell gives (127)', async () => {
    const r = await estimate(['--', 'gpumem-no-such-program']);
    expect(r.code).toBe(127);
    expect(r.stderr).toMatch(/gpumem-no-such-program: command not found/);
  });
});
