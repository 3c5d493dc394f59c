import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deeplabV3Resnet50 } from '../../core/estimate/deeplab.js';
import { encodeSafetensors } from '../../core/estimate/helpers.js';
import { gpumemInProcess, type CliResult } from '../../helpers/cli.js';

const SEED = join(__dirname, '../../fixtures/estimate/deeplabv3_resnet50.header.safetensors');
const DOC = readFileSync(join(__dirname, '../../../docs/estimate.md'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'gpumem-estimate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const gpumem = (...args: string[]): Promise<CliResult> => gpumemInProcess(['estimate', '--no-color', ...args]);

describe('gpumem estimate (CLI)', () => {
  it('counts a written safetensors file exactly, reading only its header', async () => {
    // A file with real data after the header: the count must come from the header alone.
    const file = join(tmp, 'model.safetensors');
    writeFileSync(file, encodeSafetensors([{ name: 'a.weight', dtype: 'BF16', shape: [300, 7] }, { name: 'b.bias', dtype: 'F32', shape: [11] }], true));
    const r = await gpumem(file, '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { schemaVersion: number; model: { totalParams: number; paramsByDtype: Record<string, number> } };
    expect(j.schemaVersion).toBe(1);
    expect(j.model.totalParams).toBe(2111);
    expect(j.model.paramsByDtype).toEqual({ BF16: 2100, F32: 11 });
  });

  it('reads a sharded folder through its index', async () => {
    const dir = join(tmp, 'sharded');
    mkdirSync(dir);
    writeFileSync(join(dir, 's1.safetensors'), encodeSafetensors([{ name: 'x.weight', dtype: 'F16', shape: [10, 10] }]));
    writeFileSync(join(dir, 's2.safetensors'), encodeSafetensors([{ name: 'y.weight', dtype: 'F16', shape: [5] }]));
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { 'x.weight': 's1.safetensors', 'y.weight': 's2.safetensors' } }));
    const j = JSON.parse((await gpumem(dir, '--json')).stdout) as { model: { totalParams: number; source: string } };
    expect(j.model).toMatchObject({ totalParams: 105, source: 'sharded' });
  });

  it('derives GPT-2 from its config and finds a max batch on a named GPU', async () => {
    const cfg = join(tmp, 'config.json');
    writeFileSync(cfg, JSON.stringify({ model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024 }));
    const r = await gpumem(cfg, '--precision', 'amp-bf16', '--batch', '8', '--gpu', 'H100-80GB', '--effective-batch', '512', '--json');
    const j = JSON.parse(r.stdout) as { model: { totalParams: number }; fit: { maxBatch: number; peakAtMaxBytes: number; budgetBytes: number }; accumulation: { microBatch: number; steps: number } };
    expect(j.model.totalParams).toBe(124_439_808);
    expect(j.fit.maxBatch).toBeGreaterThan(8);
    expect(j.fit.peakAtMaxBytes).toBeLessThanOrEqual(j.fit.budgetBytes);
    expect(j.accumulation.microBatch * j.accumulation.steps).toBeGreaterThanOrEqual(512);
    expect(j.accumulation.microBatch).toBeLessThanOrEqual(j.fit.maxBatch);
  });

  it('--gpu: a loose table name, a marketing-size row said to be an upper bound, and a plain size all give a budget', async () => {
    type Fit = { fit: { gpu: string; capacityBytes: number } };
    const byName = JSON.parse((await gpumem('--params', '1B', '--gpu', '4090', '--json')).stdout) as Fit;
    expect(byName.fit.gpu).toBe('RTX-4090-24GB');
    expect(byName.fit.capacityBytes).toBe(24564 * 1024 * 1024);
    const marketing = JSON.parse((await gpumem('--params', '1B', '--gpu', 'a6000', '--json')).stdout) as Fit;
    expect(marketing.fit.gpu).toBe('RTX-A6000-48GB (marketing size, an upper bound)');
    const size = JSON.parse((await gpumem('--params', '1B', '--gpu', '24GiB', '--json')).stdout) as Fit;
    expect(size.fit.capacityBytes).toBe(24 * 1024 ** 3);
  });

  it('bad input: one error line and a hint, exit 2, no stack', async () => {
    const junk = join(tmp, 'junk.safetensors');
    writeFileSync(junk, 'this is not a safetensors file at all');
    const r = await gpumem(junk);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: .*junk\.safetensors/);
    expect(r.stderr).toMatch(/hint: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect((await gpumem('--params', '7B', '--gpu', 'Z80')).code).toBe(2);
    expect((await gpumem(join(tmp, 'missing.safetensors'))).code).toBe(2);
    const dropout = await gpumem('--params', '7B', '--lora-rank', '8', '--lora-dropout', '1');
    expect(dropout.code).toBe(2);
    expect(dropout.stderr).toMatch(/error: .*--lora-dropout/);
    const mlp = await gpumem('--params', '1.4B', '--layers', '24', '--hidden', '2048', '--mlp', 'relu');
    expect(mlp.code).toBe(2);
    expect(mlp.stderr).toMatch(/error: .*--mlp/);
  });

  it('--mlp gelu shapes a model known by its size as a GeLU block: phi-1.5 under LoRA saves fewer activations', async () => {
    // phi-1.5's shape (hidden 2048, 24 layers, MLP 8192 around a GeLU), LoRA r=8 in bf16 at 1044 tokens.
    const phi = ['--params', '1418270720', '--layers', '24', '--hidden', '2048', '--heads', '32', '--intermediate', '8192',
      '--vocab', '51200', '--lora-rank', '8', '--precision', 'bf16', '--seq', '1044', '--json'];
    type Peak = { peak: { breakdown: { activationsBytes: number } }; assumptions: string[] };
    const swiglu = JSON.parse((await gpumem(...phi)).stdout) as Peak;
    const gelu = JSON.parse((await gpumem(...phi, '--mlp', 'gelu')).stdout) as Peak;
    // Frozen fc1/fc2 keep only the GeLU input (s·f at 2 bytes) where a SwiGLU block keeps gate, up and SiLU(gate);
    // LayerNorm keeps a 16-bit input where RMSNorm keeps a float32 one and a float32 rsqrt per token.
    const perLayer = 2 * (2 * 1044 * 8192) + 2 * (4 - 2) * 1044 * 2048 + 2 * 4 * 1044;
    const finalNorm = 4 * 1044 * 2048;
    expect(swiglu.peak.breakdown.activationsBytes - gelu.peak.breakdown.activationsBytes).toBe(24 * perLayer + finalNorm);
    // The shape is a guess like any default, so it leads the assumptions, every value spelled out.
    expect(gelu.assumptions[0]).toMatch(/^shaped from --params as a decoder: 24 layers, hidden 2048, 32 heads \(32 key\/value\), MLP width 8192 \(GeLU MLP, LayerNorm\), vocabulary 51200, no dropout;/);
    expect(swiglu.assumptions[0]).toContain('(SwiGLU MLP, RMSNorm)');
    const shapeless = JSON.parse((await gpumem('--params', '7B', '--json')).stdout) as Peak;
    expect(shapeless.assumptions.some((a) => a.startsWith('shaped from'))).toBe(false);
  });

  it('a zero, negative or fractional shape size, LoRA rank or parameter count is a usage error, not nonsense bytes', async () => {
    const shape = ['--params', '7B', '--layers', '2', '--hidden', '128'];
    const cases: string[][] = [
      [...shape, '--heads', '0'],
      [...shape, '--vocab', '0'],
      ['--params', '7B', '--layers', '2.5', '--hidden', '128'],
      ['--params', '7B', '--layers', '2', '--hidden', '-128'],
      ['--params', '7B', '--layers', '0', '--hidden', '128'],
      [...shape, '--lora-rank', '0'],
      [...shape, '--lora-rank', '-4'],
      ['--params', '0'],
    ];
    for (const args of cases) {
      const r = await gpumem(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^gpumem: error: --(heads|vocab|layers|hidden|lora-rank|params): /);
      expect(r.stderr).toMatch(/hint: /);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    }
    expect((await gpumem(...shape, '--heads', '1')).code).toBe(0);
  });

  it('the seed case in docs/estimate.md: stage 2 breaks, each fix fits, with the documented numbers', async () => {
    const stages = 'stage1:freeze=backbone,batch=2,act=1040MiB stage2:full,batch=2,act=8456MiB';
    const broken = await gpumem(SEED, '--gpu', 'T4-16GB', '--stages', stages);
    expect(broken.code).toBe(1);
    const rows = broken.stdout.split('\n').filter((l) => /^\s+stage[12]\s+batch/.test(l));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(DOC).toContain(row.trimEnd());
    expect(broken.stdout).toMatch(/stage2 breaks because activations/);
    const fixes: Array<[string, string]> = [
      ['stage2:full,batch=1,act=8456MiB', '9.24 GiB'],
      ['stage2:full,batch=2,ckpt=full,act=3304MiB', '7.43 GiB'],
    ];
    for (const [stage2, peak] of fixes) {
      const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--stages', `stage1:freeze=backbone,batch=2,act=1040MiB ${stage2}`);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(peak);
      expect(DOC).toContain(`| \`${stage2}\` | ${peak} | yes |`);
    }
  });

  it('docs/estimate.md names every field of the --json document', async () => {
    const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--effective-batch', '8', '--activation-bytes-per-sample', '1GiB', '--unfreeze', 'backbone',
      '--stages', 'stage1:freeze=backbone,batch=2,act=1040MiB stage2:full,batch=2,act=8456MiB', '--json');
    const j = JSON.parse(r.stdout) as Record<string, Record<string, unknown> & { [k: string]: unknown }>;
    const section = DOC.slice(DOC.indexOf('## JSON (`--json`)'), DOC.indexOf('## Accuracy'));
    const keysOf = (o: unknown): string[] => Object.keys(o as object);
    const stage = (j.stages as unknown as Array<Record<string, unknown>>)[0];
    const unfreeze = (j.unfreeze as unknown as Array<Record<string, unknown>>)[0];
    const fields = [
      ...keysOf(j), ...keysOf(j.model), ...keysOf(j.setup), ...keysOf(j.environment), ...keysOf(j.fit), ...keysOf(j.accumulation),
      ...keysOf(stage), ...keysOf(unfreeze), ...keysOf(j.peak), ...keysOf((j.peak as { breakdown: object }).breakdown),
    ];
    expect(j.accumulation).not.toBeNull();
    for (const field of new Set(fields)) expect(section, field).toContain(`"${field}"`);
    expect(section).toContain(`"schemaVersion": ${String(j.schemaVersion)}`);
  });

  it('the same model file holds the 42,004,074 parameters torchvision publishes', async () => {
    expect(readFileSync(SEED)).toEqual(Buffer.from(encodeSafetensors(deeplabV3Resnet50(), false, { format: 'pt', note: 'header only: shapes of torchvision deeplabv3_resnet50, no weights' })));
    expect((await gpumem(SEED)).stdout).toContain('42,004,074 parameters');
  });
});
