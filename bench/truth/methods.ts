/**
 * The four ways the accuracy benchmark estimates one published case: gpumem's config mode, gpumem's trace mode,
 * accelerate's "Training using Adam" rule and DeepSpeed's model-states formula. Each returns the figure in the
 * view the case measured (max_memory_allocated, max_memory_reserved or nvidia-smi) or says why it cannot.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export type Metric = 'max_memory_allocated' | 'max_memory_reserved' | 'nvidia-smi';

/** One published measurement, as bench/truth/measurements.json holds it. */
export interface TruthCase {
  id: string;
  model: {
    name: string; config: string | null; params?: number; hidden: number; layers: number; heads: number;
    kvHeads?: number; intermediate: number; vocab: number; attention?: string; loraRank?: number;
    /** The MLP's kind when known only by its shape (`--mlp`): SwiGLU when absent. */
    mlp?: 'gelu' | 'swiglu';
  };
  batch: number; accumulation: number; seq: number | null; precision: string; optimizer: string;
  checkpointing: string; optimizerImpl?: string; gpu: string; cuda: string; metric: Metric; valueBytes: number; heldOut: boolean;
  /** The PyTorch release the run used (major.minor). */
  torch?: string;
  gpus?: number; sharding?: string; trace?: { script: string; args: string[] } | null; traceUnavailable?: string;
}

/** Bytes by category at the estimate's peak, in the order the benchmark prints them. */
export type Breakdown = Record<string, number>;

/** An estimate in the case's view (with its breakdown at the peak when the method has one), or why it has none. */
export type Estimate = { bytes: number; breakdown?: Breakdown } | { unavailable: string };

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist/cli/bin.js');

export function gpumemJson(args: string[], timeoutMs: number): Record<string, unknown> | string {
  const r = spawnSync(process.execPath, [CLI, 'estimate', '--json', ...args], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  // Exit 1 only says the batch does not fit a --gpu budget; the JSON is still complete.
  if ((r.status === 0 || r.status === 1) && r.stdout.trim().startsWith('{')) return JSON.parse(r.stdout) as Record<string, unknown>;
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop() ?? '';
  return why.slice(0, 120);
}

/**
 * The run's environment as published: the GPU (by the table's id, for the cuBLAS workspace and generation), the
 * CUDA version (eager module loading and its context before 11.7) and the PyTorch release (what its autograd
 * keeps and how zero_grad() behaves).
 */
export function environmentArgs(c: TruthCase): string[] {
  const args: string[] = [];
  const gpu = /\b(V100|A100|H100)\b.*?(\d+)GB/.exec(c.gpu);
  if (gpu) args.push('--gpu', `${gpu[1]}-${gpu[2]}GB`);
  const cuda = /^\s*(\d+\.\d+)/.exec(c.cuda);
  if (cuda) args.push('--cuda', cuda[1]!);
  if (c.torch) args.push('--torch-version', c.torch);
  return args;
}

/** The `gpumem estimate` options that state the case's setup (never anything tuned to its measurement). */
export function configArgs(c: TruthCase): string[] {
  const m = c.model;
  const args = m.config
    ? [m.config]
    : ['--params', String(m.params), '--layers', String(m.layers), '--hidden', String(m.hidden), '--heads', String(m.heads),
       '--kv-heads', String(m.kvHeads ?? m.heads), '--intermediate', String(m.intermediate), '--vocab', String(m.vocab),
       ...(m.mlp ? ['--mlp', m.mlp] : [])];
  args.push('--batch', String(c.batch), '--precision', c.precision, '--optimizer', c.optimizer, '--checkpointing', c.checkpointing);
  if (c.seq) args.push('--seq', String(c.seq));
  if (m.attention) args.push('--attention', m.attention);
  if (c.optimizerImpl && c.optimizer !== 'adafactor' && c.optimizer !== 'adam8bit') args.push('--optimizer-impl', c.optimizerImpl);
  if (m.loraRank) args.push('--lora-rank', String(m.loraRank));
  if (c.sharding && c.sharding !== 'none') args.push('--sharding', c.sharding, '--num-gpus', String(c.gpus ?? 1));
  return [...args, ...environmentArgs(c)];
}

interface ConfigPeak { totalBytes: number; breakdown: Record<string, number> & { contextBytes: number; allocatorSlackBytes: number } }

/** Config mode: nvidia-smi = the peak total; reserved = total − context; allocated = reserved − allocator slack. */
export function configEstimate(c: TruthCase): Estimate & { totalParams?: number } {
  const out = gpumemJson(configArgs(c), 120_000);
  if (typeof out === 'string') return { unavailable: out };
  const peak = out.peak as ConfigPeak;
  const totalParams = (out.model as { totalParams: number }).totalParams;
  const reserved = peak.totalBytes - peak.breakdown.contextBytes;
  const bytes = c.metric === 'nvidia-smi' ? peak.totalBytes : c.metric === 'max_memory_reserved' ? reserved : reserved - peak.breakdown.allocatorSlackBytes;
  const b = peak.breakdown;
  const breakdown: Breakdown = {
    weights: b.weightsBytes! + (b.emaBytes ?? 0), gradients: b.gradientsBytes!, 'optimizer-state': b.optimizerStatesBytes!,
    activations: b.activationsBytes!, temporaries: b.transientsBytes!, workspace: b.workspaceBytes!, slack: b.allocatorSlackBytes, context: b.contextBytes,
  };
  return { bytes, totalParams, breakdown };
}

/** Trace mode: the case's script run on fake tensors under `gpumem estimate -- python …`. */
export function traceEstimate(c: TruthCase): Estimate {
  if (!c.trace) return { unavailable: c.traceUnavailable ?? 'no script' };
  const out = gpumemJson([...environmentArgs(c), '--', join(ROOT, '.venv/bin/python'), join(ROOT, c.trace.script), ...c.trace.args], 600_000);
  if (typeof out === 'string') return { unavailable: out };
  const key = c.metric === 'nvidia-smi' ? 'nvidiaSmiBytes' : c.metric === 'max_memory_reserved' ? 'peakReservedBytes' : 'peakAllocatedBytes';
  // Slack: what the allocator reserved beyond the bytes requested at the peak.
  const slack = (out.peakReservedBytes as number) - (out.peakRequestedBytes as number);
  const breakdown: Breakdown = { ...(out.byCategory as Breakdown), slack, context: out.contextBytes as number };
  return { bytes: out[key] as number, breakdown };
}

/**
 * accelerate `estimate-memory`, "Training using Adam": four times the model's size in its load dtype (weights,
 * gradients and two Adam moments), regardless of optimizer, activations, LoRA or sharding.
 */
export function accelerateEstimate(c: TruthCase, totalParams: number): Estimate {
  const bytesPerParam = c.precision === 'bf16' || c.precision === 'fp16' ? 2 : 4;
  return { bytes: 4 * bytesPerParam * totalParams };
}

/**
 * DeepSpeed's model states for mixed-precision Adam (ZeRO paper, K = 12): stage 0 (2 + 2 + 12)Ψ, stage 1 4Ψ + 12Ψ/N,
 * stage 2 2Ψ + 14Ψ/N, stage 3 16Ψ/N. Unsharded runs are stage 0; FSDP full shard is stage 3.
 */
export function deepspeedEstimate(c: TruthCase, totalParams: number): Estimate {
  const n = c.gpus ?? 1;
  const p = totalParams;
  const stage = c.sharding === 'fsdp' || c.sharding === 'zero3' ? 3 : c.sharding === 'zero2' ? 2 : c.sharding === 'zero1' ? 1 : 0;
  const bytes = [16 * p, 4 * p + (12 * p) / n, 2 * p + (14 * p) / n, (16 * p) / n][stage]!;
  return { bytes: Math.round(bytes) };
}
