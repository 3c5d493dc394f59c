/**
 * Header mode without activation sizes (a CNN's weights file, `--stages` without `act=`): the estimate must say
 * activations are unknown and point to `act=` or the traced mode, never claim "fits" or print a max batch it
 * cannot know (it used to print "fits  max batch 1048576" for both stages), and a CNN gets no assumption about
 * a vocabulary it does not have.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gpumemInProcess, type CliResult } from '../../helpers/cli.js';

const SEED = join(__dirname, '../../fixtures/estimate/deeplabv3_resnet50.header.safetensors');
const STAGES = 'stage1:freeze=backbone,batch=2 stage2:full,batch=2';
const tmp = mkdtempSync(join(tmpdir(), 'gpumem-estimate-unknown-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const gpumem = (...args: string[]): Promise<CliResult> => gpumemInProcess(['estimate', '--no-color', ...args]);

interface Stage { name: string; fits: boolean | null; maxBatch: number | null; activationsKnown: boolean }

describe('estimate with unknown activations', () => {
  it('stages without act= claim no fit and no max batch, and point to act= and the traced mode', async () => {
    const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--stages', STAGES);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/1048576/);
    const rows = r.stdout.split('\n').filter((l) => /^\s+stage[12]\s+batch/.test(l));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatch(/≥ \S+ [KMG]iB\s+\S+\s+activations unknown\s*$/);
      expect(row).not.toMatch(/\bfits\b|max batch/);
    }
    expect(r.stdout).toMatch(/^note: activations unknown in stage1, stage2: .*act=BYTES.*gpumem estimate --gpu T4-16GB --stages "stage1 stage2" -- python train\.py --stage \{stage\} --batch-size \{batch\}$/m);
    expect(r.stdout).toMatch(/^T4-16GB: .* batch 1 fits before activations, which are unknown$/m);
    expect(r.stdout).toMatch(/^ {2}activations +unknown$/m);
  });

  it('--json: stages have fits null, maxBatch null and activationsKnown false; a stage that breaks on states alone is still false', async () => {
    const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--stages', STAGES, '--json');
    const stages = (JSON.parse(r.stdout) as { stages: Stage[] }).stages;
    expect(stages.map((s) => [s.fits, s.maxBatch, s.activationsKnown])).toEqual([[null, null, false], [null, null, false]]);
    const tiny = await gpumem(SEED, '--gpu', '512MiB', '--stages', STAGES, '--json');
    expect((JSON.parse(tiny.stdout) as { stages: Stage[] }).stages.map((s) => s.fits)).toEqual([false, false]);
    expect(tiny.code).toBe(1);
  });

  it('with act= the stages still get their verdict and max batch', async () => {
    const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--stages', 'stage1:freeze=backbone,batch=2,act=1040MiB stage2:full,batch=2,act=8456MiB', '--json');
    const stages = (JSON.parse(r.stdout) as { stages: Stage[] }).stages;
    // act= is a slope of the peak: (budget − states) / 1040 MiB, with no working set or slack added to it.
    expect(stages.map((s) => [s.fits, s.maxBatch, s.activationsKnown])).toEqual([[true, 12, true], [false, 1, true]]);
  });

  it('--unfreeze without activations gives no max batch', async () => {
    const r = await gpumem(SEED, '--gpu', 'T4-16GB', '--unfreeze', 'backbone', '--json');
    const steps = (JSON.parse(r.stdout) as { unfreeze: Array<{ maxBatch: number | null }> }).unfreeze;
    expect(steps.map((s) => s.maxBatch)).toEqual([null, null]);
  });

  it('a CNN gets no vocabulary assumption; a language model and a classifier get theirs', async () => {
    const cnn = await gpumem(SEED, '--gpu', 'T4-16GB');
    expect(cnn.stdout).not.toMatch(/vocabulary|logits/);
    const gpt2 = join(tmp, 'gpt2.json');
    writeFileSync(gpt2, JSON.stringify({ model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024 }));
    expect((await gpumem(gpt2, '--seq', '512')).stdout).toMatch(/^assumes: the loss over the vocabulary materialises float32 logits/m);
    const bert = join(tmp, 'bert.json');
    writeFileSync(bert, JSON.stringify({ model_type: 'bert', architectures: ['BertForSequenceClassification'], hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, vocab_size: 30522, max_position_embeddings: 512, num_labels: 3 }));
    const cls = await gpumem(bert, '--seq', '128');
    expect(cls.stderr).toBe('');
    expect(cls.stdout).toMatch(/^assumes: the loss over the 3 outputs per sample materialises float32 logits/m);
  });
});
