/** Options of `gpumem estimate` (format: cli/spec.ts). */
import type { MlpKind } from '../../core/estimate/architectures.js';
import type { AttentionImpl, Checkpointing, OptimizerImpl, OptimizerKind, Precision, Sharding } from '../../core/estimate/setup.js';
import { defineCommand } from '../spec.js';
import { JSON_TABLE, SOURCE_TABLE, type JsonOption, type SourceOptions } from './shared.js';

export interface EstimateOptions extends JsonOption, SourceOptions {
  params: string | undefined;
  layers: number | undefined;
  hidden: number | undefined;
  heads: number | undefined;
  kvHeads: number | undefined;
  intermediate: number | undefined;
  vocab: number | undefined;
  mlp: MlpKind | undefined;
  seq: number | undefined;
  batch: number;
  precision: Precision;
  optimizer: OptimizerKind;
  optimizerImpl: OptimizerImpl;
  freeze: string[] | undefined;
  loraRank: number | undefined;
  loraModules: string[] | undefined;
  loraDropout: number;
  checkpointing: Checkpointing;
  attention: AttentionImpl;
  ema: boolean;
  sharding: Sharding;
  numGpus: number;
  activationBytesPerSample: number | undefined;
  gpu: string | undefined;
  gpuIndex: number;
  margin: number;
  effectiveBatch: number | undefined;
  stages: string | undefined;
  unfreeze: string[] | undefined;
  cuda: string | undefined;
  torchVersion: string | undefined;
  keepGrads: boolean;
  context: number | undefined;
  fragmentation: number;
  entry: string | undefined;
  steps: number;
  traceTimeout: number;
  python: string;
  allocConf: string | undefined;
  html: string | undefined;
  worldSize: number;
}

/** Shape sizes feed divisions and products in the activation model, so each is a whole number ≥ 1. */
const SIZE = { type: 'number', value: 'N', integer: true, min: 1 } as const;

export const ESTIMATE = defineCommand<EstimateOptions>({
  name: 'estimate',
  summary: 'predict training memory by phase and stage; the largest batch that fits; accumulation',
  usage: 'estimate [MODEL] [options] | estimate [options] -- python train.py … | estimate --entry MOD:FN',
  passthrough: true,
  description:
    'With a command after -- (or --entry), traces the real training step on fake tensors (no GPU, no weights) and replays it: peak by phase, module and category, and what nvidia-smi would show. Otherwise predicts the GPU memory of a training setup from a model\'s safetensors header (only the header is read), a sharded index, a Hugging Face config.json (gpt2, bert, llama, mistral, qwen2/3, vit) or --params. Prints the breakdown at the peak phase (forward end, backward, optimizer step); with --gpu the largest batch that fits with a margin, with --effective-batch the accumulation, with --stages each stage\'s peak and which one breaks. Formulas and their sources: docs/estimate.md.',
  args: [{ name: 'MODEL', description: 'model.safetensors, a model folder, model.safetensors.index.json or config.json' }],
  options: {
    params: { type: 'string', value: 'N', description: 'parameter count instead of a file (7B, 350M, 124439808)' },
    layers: { ...SIZE, description: 'with --params: transformer layers (enables the activation model)' },
    hidden: { ...SIZE, description: 'with --params: hidden size' },
    heads: { ...SIZE, description: 'with --params: attention heads (default hidden/128)' },
    kvHeads: { ...SIZE, description: 'with --params: key/value heads for GQA (default = heads)' },
    intermediate: { ...SIZE, description: 'with --params: MLP width (default 8·hidden/3 rounded up to 256 for SwiGLU, 4·hidden for GeLU)' },
    mlp: { type: 'string', value: 'KIND', choices: ['swiglu', 'gelu'], description: 'with --params: SwiGLU MLP and RMSNorm (Llama, Mistral, Qwen; the default), or GeLU MLP and LayerNorm (GPT-2, GPT-NeoX, Pythia, StableLM-Alpha, phi)' },
    vocab: { ...SIZE, description: 'with --params: vocabulary size (default 32000)' },
    seq: { ...SIZE, description: 'sequence length (default: the config\'s maximum); for a traced command, what {seq} becomes (without it and with --gpu, the longest that fits is searched)' },
    batch: { ...SIZE, short: 'b', default: 1, description: 'micro-batch size per GPU' },
    precision: { type: 'string', value: 'P', choices: ['fp32', 'amp-bf16', 'amp-fp16', 'bf16'], default: 'fp32', description: 'fp32; autocast with fp32 master weights (amp-*); or pure bf16' },
    optimizer: { type: 'string', value: 'OPT', choices: ['adamw', 'adam', 'sgd', 'sgd-momentum', 'adafactor', 'adam8bit'], default: 'adamw', description: 'optimizer whose states are counted' },
    optimizerImpl: { type: 'string', value: 'IMPL', choices: ['foreach', 'fused', 'for-loop'], default: 'foreach', description: 'PyTorch Adam implementation (foreach needs a parameter-sized temporary at the step)' },
    freeze: { type: 'list', value: 'PREFIX', description: 'module prefixes that do not train (repeatable or comma-separated)' },
    loraRank: { ...SIZE, value: 'R', description: 'train LoRA adapters of rank R instead of the weights' },
    loraModules: { type: 'list', value: 'NAME', description: 'modules LoRA adapts (default q_proj,v_proj)' },
    loraDropout: { type: 'number', value: 'P', min: 0, max: 1, maxExclusive: true, default: 0, noun: 'a probability', description: "PEFT's lora_dropout: each adapter keeps its own dropped copy of its input and a mask" },
    checkpointing: { type: 'string', value: 'MODE', choices: ['none', 'selective', 'full'], default: 'none', description: 'activation (gradient) checkpointing' },
    attention: { type: 'string', value: 'IMPL', choices: ['sdpa', 'eager'], default: 'sdpa', description: 'attention kernel: SDPA/flash keeps no s² scores, eager does' },
    ema: { type: 'boolean', description: 'keep an EMA copy of the weights on the GPU' },
    sharding: { type: 'string', value: 'S', choices: ['none', 'zero1', 'zero2', 'zero3', 'fsdp'], default: 'none', description: 'ZeRO stage or FSDP (full shard) over --num-gpus' },
    numGpus: { ...SIZE, default: 1, description: 'data-parallel GPUs that --sharding spreads states over' },
    activationBytesPerSample: { type: 'bytes', value: 'BYTES', description: 'measured bytes per sample (gpumem fit\'s slope of the peak) for models without a transformer config: all memory that grows with the batch, working set and allocator slack included, as measured on the run as given with its --freeze' },
    gpu: { type: 'string', value: 'GPU', description: 'budget: a GPU name (H100-80GB, A100-40GB, T4-16GB…), auto (free memory of the live GPU) or a size' },
    gpuIndex: { type: 'number', value: 'N', integer: true, min: 0, default: 0, description: 'with --gpu auto: which GPU' },
    margin: { type: 'number', value: 'PCT', min: 0, max: 100, maxExclusive: true, default: 8, noun: 'a percentage', description: 'percent of the budget kept free for estimate error' },
    effectiveBatch: { ...SIZE, description: 'global batch to reach with gradient accumulation' },
    stages: { type: 'string', value: 'SPEC', description: 'stages, e.g. "stage1:freeze=backbone,batch=2 stage2:full" (keys: freeze, full, batch, ckpt, act, lora); with a traced command holding {stage}: the stage names, each traced' },
    unfreeze: { type: 'list', value: 'GROUP', description: 'progressive unfreezing: module groups (A+B) in the order they are unfrozen' },
    cuda: { type: 'string', value: 'X.Y', description: 'CUDA version the run uses: before 11.7 kernels load eagerly and the default context is 1343 MiB (default: lazy loading)' },
    torchVersion: { type: 'string', value: 'X.Y', description: 'the PyTorch release the run will use: before 2.0 zero_grad() keeps gradients (as --keep-grads), before 1.11 softmax also keeps its input; a traced step also gets its allocator rules' },
    keepGrads: { type: 'boolean', description: 'gradients stay allocated between steps (zero_grad(set_to_none=False), the default before torch 2.0)' },
    context: { type: 'bytes', value: 'BYTES', description: 'CUDA context size (default by GPU generation: 758 MiB on Hopper, measured on an H100; 640 MiB on Blackwell and 512 MiB elsewhere, assumed; 1343 MiB with --cuda before 11.7)' },
    fragmentation: { type: 'number', value: 'PCT', min: 0, max: 100, maxExclusive: true, default: 5, noun: 'a percentage', description: 'allocator slack as percent of activations and transients' },
    entry: { type: 'string', value: 'MOD:FN', description: 'trace make_step() → (model, batch, step) instead of a command after --' },
    steps: { type: 'number', value: 'N', integer: true, min: 1, max: 20, default: 2, description: 'training steps to trace (2 shows optimizer state and persistent gradients)' },
    traceTimeout: { type: 'number', value: 'S', min: 1, max: 86_400, default: 600, noun: 'a number of seconds', description: 'seconds a traced program may run before it is ended' },
    python: { type: 'string', path: true, value: 'PATH', default: 'python3', description: 'with --entry: the Python interpreter to run' },
    allocConf: { type: 'string', value: 'SETTINGS', allowEmpty: true, description: 'with a traced step: caching-allocator settings for the replay (default: PYTORCH_CUDA_ALLOC_CONF)' },
    worldSize: { ...SIZE, default: 1, description: 'with a traced command: ranks of the distributed job; each rank that can differ (0, and N-1 for the others) is traced on PyTorch\'s fake process group' },
    html: { type: 'string', path: true, value: 'OUT', description: 'with a traced step: also write a self-contained HTML page (memory timeline, categories, modules; no network)' },
    ...JSON_TABLE,
    ...SOURCE_TABLE,
  },
  examples: [
    'gpumem estimate gpt2/config.json --precision amp-bf16 --batch 8 --seq 1024 --gpu H100-80GB',
    'gpumem estimate model.safetensors --activation-bytes-per-sample 1.4GiB --gpu auto --effective-batch 64',
    'gpumem estimate --params 7B --layers 32 --hidden 4096 --lora-rank 16 --precision bf16 --seq 2048',
    'gpumem estimate --gpu A100-40GB -- python train.py --batch-size 16',
  ],
  exits: ['1: the given batch, or a stage, does not fit the --gpu budget'],
});
