/**
 * Config mode against the tracer on transformers' own GPT-2: the activation its config names changes what each
 * layer keeps (the Python gelu_new keeps four MLP-wide tensors, PyTorch's GeLU kernel one), and config mode must
 * move by exactly what the traced step moved. One config.json feeds both modes. Needs .venv/ and dist/.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { estimate, SCRIPTS, traced, TIMEOUT_MS } from './traced-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'gpumem-gelu-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function configFile(activation: string): string {
  const file = join(tmp, `${activation}.json`);
  writeFileSync(file, JSON.stringify({
    model_type: 'gpt2', n_embd: 256, n_layer: 4, n_head: 4, vocab_size: 1024, n_positions: 512,
    resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0, activation_function: activation,
  }));
  return file;
}

async function configActivations(file: string): Promise<number> {
  const r = await estimate([file, '--seq', '512', '--batch', '1', '--precision', 'fp32', '--optimizer', 'sgd', '--json']);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { peak: { breakdown: { activationsBytes: number } } }).peak.breakdown.activationsBytes;
}

describe('GPT-2 activation functions, config mode against the traced step', () => {
  it('gelu_new over gelu_pytorch_tanh: 3 more MLP-wide float32 tensors per layer, in both modes', async () => {
    const python = requireTestPython();
    const [newGelu, kernel] = [configFile('gelu_new'), configFile('gelu_pytorch_tanh')];
    const run = (f: string) => traced(['--', python, join(SCRIPTS, 'train_gpt2_config.py'), f]);
    const [tracedNew, tracedKernel] = await Promise.all([run(newGelu), run(kernel)]);
    const tracedDiff = tracedNew.byCategory.activations! - tracedKernel.byCategory.activations!;
    expect(tracedDiff).toBe(4 * 3 * 4 * 512 * 1024); // layers × tensors × fp32 bytes × tokens × MLP width
    expect((await configActivations(newGelu)) - (await configActivations(kernel))).toBe(tracedDiff);
  }, TIMEOUT_MS);
});
