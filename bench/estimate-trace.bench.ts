/**
 * Speed and host memory of tracing one training step on fake tensors (gpumem estimate -- python …):
 * a Llama-2-7B-shaped model at sequence 4096 (goal ≤ 30 s, ≤ 2 GB), ResNet-50 and ViT-B/16 at batch 32 (goal ≤ 5 s).
 * Peers, measured in the same run: importing the same libraries in a bare interpreter, which every trace pays
 * before its first op, and the same step under plain FakeTensorMode on the CPU device (bench/trace/plain_fake.py:
 * no recorder, no CUDA emulation). Goal: the traced step costs ≤ 1.2× the plain one in CPU beyond the imports.
 * Needs .venv/ (test/setup/python-venv.ts) and GNU time for the peak resident size.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const PYTHON = join(ROOT, '.venv/bin/python');
const TIME = '/usr/bin/time';

interface Measured {
  wallS: number;
  /** User + system CPU seconds: what the trace costs, less sensitive than wall time to a shared machine's load. */
  cpuS: number;
  maxRssBytes: number;
  traceS: number | null;
}

function measure(args: string[], env: NodeJS.ProcessEnv, tracePath: string | null): Measured {
  const r = spawnSync(TIME, ['-f', 'GPUMEM_TIME %e %M %U %S', PYTHON, ...args], { env, encoding: 'utf8', cwd: ROOT, timeout: 600_000 });
  const m = /GPUMEM_TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(r.stderr ?? '');
  if (!m) throw new Error(`no timing from ${args.join(' ')}: ${(r.stderr ?? '').slice(-400)}`);
  let traceS: number | null = null;
  if (tracePath) {
    const header = JSON.parse(readFileSync(tracePath, 'utf8').split('\n', 1)[0]!) as { traceSeconds?: number; stepsDone?: number };
    if (header.stepsDone !== 1) throw new Error(`${args.join(' ')}: the traced step did not complete`);
    traceS = header.traceSeconds ?? null;
  }
  return { wallS: Number(m[1]), cpuS: Number(m[3]) + Number(m[4]), maxRssBytes: Number(m[2]) * 1024, traceS };
}

/** Seconds of the script's step under plain FakeTensorMode, counted from torch's import as the tracer counts. */
function plainSeconds(script: string): number {
  const r = spawnSync(PYTHON, ['bench/trace/plain_fake.py', script], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, encoding: 'utf8', cwd: ROOT, timeout: 600_000 });
  const m = /GPUMEM_PLAIN_SECONDS ([\d.]+)/.exec(r.stdout ?? '');
  if (!m) throw new Error(`plain fake step of ${script} failed: ${(r.stderr ?? '').slice(-400)}`);
  return Number(m[1]);
}

export async function run(): Promise<void> {
  if (!existsSync(PYTHON) || !existsSync(TIME)) {
    process.stdout.write(`needs ${PYTHON} (npx vitest sets it up) and ${TIME}; not run\n`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-trace-bench-'));
  try {
    const peer = measure(['-c', 'import torch, torchvision, transformers'], process.env, null);
    process.stdout.write(`peer: bare import of torch, torchvision, transformers  ${peer.wallS.toFixed(1)} s wall, ${peer.cpuS.toFixed(1)} s CPU, ${(peer.maxRssBytes / 2 ** 30).toFixed(2)} GiB resident\n`);
    // Each case also beside the import of exactly what its script imports: the difference is the trace itself.
    const cases: Array<[string, string, string, number, number | null]> = [
      ['Llama-7B shape, seq 4096, bf16, checkpointing, AdamW', 'bench/trace/train_llama7b.py', 'import torch; from transformers import LlamaConfig, LlamaForCausalLM', 30, 2e9],
      ['ResNet-50, batch 32, 224², SGD momentum', 'bench/trace/train_resnet50.py', 'import torch, torchvision', 5, null],
      ['ViT-B/16 (Hugging Face), batch 32, 224², fp32, AdamW', 'bench/trace/train_vit_b16.py', 'import torch; from transformers import ViTConfig, ViTForImageClassification', 5, null],
    ];
    for (const [name, script, imports, goalS, goalBytes] of cases) {
      const tracePath = join(dir, 'trace.ndjson');
      const env = { ...process.env, PYTHONPATH: `${join(ROOT, 'python/_site')}:${join(ROOT, 'python')}`, GPUMEM_ESTIMATE_TRACE: tracePath, GPUMEM_ESTIMATE_STEPS: '1', HF_HUB_OFFLINE: '1' };
      const m = measure([script], env, tracePath);
      // Ended as the traced process ends (os._exit, no interpreter shutdown), so the difference is the step alone.
      const own = measure(['-c', `${imports}; import os; os._exit(0)`], process.env, null);
      const plain = plainSeconds(script);
      const traced = m.cpuS - own.cpuS;
      process.stdout.write(
        `${name}: ${m.wallS.toFixed(1)} s wall (goal ≤ ${goalS} s; ${(m.wallS / peer.wallS).toFixed(2)}× the bare import), ${m.cpuS.toFixed(1)} s CPU (${(m.cpuS / peer.cpuS).toFixed(2)}×), ` +
          `of which tracing ${m.traceS?.toFixed(1) ?? '?'} s; ${(m.maxRssBytes / 2 ** 30).toFixed(2)} GiB resident` +
          `${goalBytes ? ` (goal ≤ ${(goalBytes / 2 ** 30).toFixed(2)} GiB)` : ''}\n` +
          `  its own imports alone (${imports}): ${own.wallS.toFixed(1)} s wall, ${own.cpuS.toFixed(1)} s CPU → the traced step costs ${traced.toFixed(1)} s CPU beyond them\n` +
          `  the same step under plain FakeTensorMode: ${plain.toFixed(2)} s from torch's import on, the traced one ${m.traceS?.toFixed(2) ?? '?'} s → the tracer costs ${m.traceS ? (m.traceS / plain).toFixed(2) : '?'}× (goal ≤ 1.20×)\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
