/**
 * PEFT's lora_dropout, config mode against the tracer: real PEFT adapters (rank 8) on transformers' Llama with
 * real torch on fake tensors. What one middle layer keeps at the start of backward is read from the trace (its
 * forward allocations still alive then); what dropout adds there must equal what config mode's layer adds. The
 * difference leaves out what both runs keep alike. Needs the .venv/ test environment (peft in it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layerBytes, loraTraining, modelFromConfig, parseStepTrace } from '../../../src/core/estimate/index.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { SCRIPTS, TIMEOUT_MS } from './traced-helpers.js';

const ROOT = join(__dirname, '../../..');
const SEQ = 128;
const tmp = mkdtempSync(join(tmpdir(), 'gpumem-lora-dropout-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Bytes that `layers.1` allocated in the forward pass of step 1 and still holds when backward starts. */
async function middleLayerKeeps(targets: string, dropout: number): Promise<number> {
  const out = join(tmp, `${targets}-${dropout}.ndjson`);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HF_HUB_OFFLINE: '1',
    PYTHONPATH: `${join(ROOT, 'python/_site')}:${join(ROOT, 'python')}`,
    GPUMEM_ESTIMATE_TRACE: out, GPUMEM_ESTIMATE_STEPS: '2',
  };
  const args = [join(SCRIPTS, 'train_llama_peft.py'), '--targets', targets, '--dropout', String(dropout), '--seq', String(SEQ)];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(requireTestPython(), args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', resolve);
  });
  expect(code).toBe(0);
  const trace = parseStepTrace(readFileSync(out, 'utf8'));
  expect(trace.error).toBeNull();
  const alive = new Map<number, { bytes: number; module: string | null; step: number; phase: string }>();
  for (const e of trace.events) {
    if (e.kind === 'alloc') {
      if (e.step === 1 && e.phase === 'backward') break;
      alive.set(e.id, e);
    } else if (e.kind === 'free') alive.delete(e.id);
  }
  let bytes = 0;
  for (const a of alive.values()) if (a.step === 1 && a.phase === 'forward' && `${a.module}.`.includes('.layers.1.')) bytes += a.bytes;
  return bytes;
}

const LLAMA = modelFromConfig(JSON.parse(readFileSync(join(SCRIPTS, 'tiny_llama/config.json'), 'utf8')) as Record<string, unknown>).shape!;
const configLayer = (targets: string, dropout: number): number =>
  layerBytes(LLAMA, SEQ, 4, 'sdpa', true, false, false, loraTraining(targets.split(','), 8, dropout));

describe("PEFT lora_dropout: each adapter's dropped copy and mask, config mode against the traced layer", () => {
  it.each([['q_proj,v_proj'], ['gate_proj,up_proj,down_proj'], ['o_proj']])('adapters on %s', async (targets) => {
    const [plain, dropped] = await Promise.all([middleLayerKeeps(targets, 0), middleLayerKeeps(targets, 0.05)]);
    expect(dropped).toBeGreaterThan(plain);
    expect(configLayer(targets, 0.05) - configLayer(targets, 0)).toBe(dropped - plain);
  }, TIMEOUT_MS);
});
