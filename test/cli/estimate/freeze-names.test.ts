/**
 * A module prefix that names no parameter (--freeze, a stage's freeze=, --unfreeze) is refused with the model's own
 * names, not taken as "nothing frozen": a ViT config with transformers 5's `vit.layers.N` names used to be estimated
 * as fully trained (86.6 M of 86.6 M trainable) without a word.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpumemInProcess, type CliResult } from '../../helpers/cli.js';

const VIT = join(__dirname, '../../../bench/results/2026-11-27-h100-80gb/estimate-accuracy/inputs/vit.config.json');
const SEED = join(__dirname, '../../fixtures/estimate/deeplabv3_resnet50.header.safetensors');
const gpumem = (...args: string[]): Promise<CliResult> => gpumemInProcess(['estimate', '--no-color', ...args]);

describe('estimate: freezing by name', () => {
  it('a prefix that matches nothing is a usage error naming the prefix and the model names near it', async () => {
    const r = await gpumem(VIT, '--seq', '197', '--batch', '8', '--freeze', 'vit.embeddings,vit.layers.0');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^gpumem: error: --freeze: "vit\.layers\.0" names no parameter of the model\nhint: .*vit\.encoder\.layer/);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
  });

  it('a prefix that matches freezes what it names', async () => {
    const r = await gpumem(VIT, '--seq', '197', '--batch', '8', '--freeze', 'vit.embeddings,vit.encoder.layer.0', '--json');
    expect(r.code, r.stderr).toBe(0);
    const model = JSON.parse(r.stdout).model as { totalParams: number; trainableParams: number };
    // One encoder layer of ViT-B: 4 × 768² + 4 × 768 (attention) + 2 × 768 × 3072 + 3072 + 768 (MLP) + 4 × 768 (norms).
    const layer = 4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 4 * 768;
    const embeddings = 768 + 197 * 768 + 768 * 3 * 16 * 16 + 768;
    expect(model.totalParams - model.trainableParams).toBe(layer + embeddings);
  });

  it('stages and progressive unfreezing are checked the same way, and --params has no names to freeze', async () => {
    const stage = await gpumem(SEED, '--stages', 'a:freeze=backbone+bakbone,batch=2 b:full,batch=2');
    expect(stage.code).toBe(2);
    expect(stage.stderr).toMatch(/--stages a freeze: "bakbone" names no parameter.*\nhint: .*backbone/);
    const unfreeze = await gpumem(SEED, '--unfreeze', 'classifier+backbone.layer9');
    expect(unfreeze.code).toBe(2);
    expect(unfreeze.stderr).toMatch(/--unfreeze: "backbone\.layer9" names no parameter.*\nhint: .*backbone\.layer4/);
    const params = await gpumem('--params', '7B', '--freeze', 'model');
    expect(params.code).toBe(2);
    expect(params.stderr).toMatch(/--freeze: the model has no parameter names/);
  });

  it('a measured per-sample figure is the run as given: its own --freeze is not taken off again, other freezes scale by saved share', async () => {
    // Large enough that the activations make the peak, where they are counted whole (a measured slope of the
    // peak: forward end and backward start carry the same bytes, and the first of them is reported).
    const perSample = 512 * 1024 * 1024;
    const r = await gpumem(SEED, '--json', '--batch', '4', '--activation-bytes-per-sample', String(perSample), '--freeze', 'backbone',
      '--stages', 'same:freeze=backbone more:full');
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { phases: Array<{ phase: string; breakdown: { activationsBytes: number } }>; stages: Array<{ peak: { phase: string; breakdown: { activationsBytes: number } } }> };
    // The backbone was frozen in the measured run itself: the figure is used as measured (it was scaled down again).
    expect(report.phases.find((p) => p.phase === 'forward-end')!.breakdown.activationsBytes).toBe(4 * perSample);
    const [same, more] = report.stages;
    expect([same!.peak.phase, same!.peak.breakdown.activationsBytes]).toEqual(['forward-end', 4 * perSample]);
    // Unfreezing the backbone saves more than the measured run did, by the ratio of saved shares.
    expect(more!.peak.breakdown.activationsBytes).toBeGreaterThan(4 * perSample * 2);
  });
});
