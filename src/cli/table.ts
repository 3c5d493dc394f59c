/**
 * The options table: every command and option gpumem accepts, declared once. Parsing (cli/args.ts),
 * `--help` (cli/help.ts) and docs/cli.md (scripts/gen-docs.ts) are all generated from it.
 */
import type { CommandSpec, OptionSpec } from './spec.js';

/** Accepted by every command. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'help', short: 'h', type: 'boolean', description: 'show help for the command and exit' },
  { name: 'no-color', type: 'boolean', description: 'plain output without colour (also when NO_COLOR is set or output is not a terminal)' },
];

/** Where GPU state comes from; shared by every command that reads the GPUs. */
export const SOURCE_OPTIONS: readonly OptionSpec[] = [
  { name: 'source', type: 'string', value: 'KIND', choices: ['auto', 'nvml', 'smi'], default: 'auto', description: 'read the GPUs through NVML, nvidia-smi, or NVML with nvidia-smi as fallback' },
  { name: 'replay', type: 'string', value: 'FILE', description: 'read GPU state from a recording made by `gpumem record` instead of the GPUs' },
  { name: 'nvml-lib', type: 'string', value: 'PATH', description: 'path of libnvidia-ml.so.1 to load (also GPUMEM_NVML_LIB)' },
];

const JSON_OPTION: OptionSpec = { name: 'json', type: 'boolean', description: 'print the result as JSON (documented, versioned schema)' };

/** Sampling window of doctor and diagnose. */
const WINDOW_OPTION: OptionSpec = { name: 'window', type: 'number', value: 'SECONDS', default: 3, description: 'sample the GPUs for this long so utilisation and idleness are measured (0: one sample)' };

/** The PyTorch companion under `gpumem run` and `gpumem pipeline` (docs/companion.md). */
const COMPANION_OPTIONS: readonly OptionSpec[] = [
  { name: 'no-companion', type: 'boolean', description: 'do not start the PyTorch companion (the child\'s environment is left as it is)' },
  { name: 'companion-rate', type: 'number', value: 'HZ', default: 10, description: 'PyTorch allocator statistics per second from the companion (0–100; 0: only OOMs and the final numbers)' },
  { name: 'snapshot-on-oom', type: 'boolean', description: 'record allocation history and write a PyTorch memory snapshot into the run folder on OOM' },
  { name: 'memory-fraction', type: 'number', value: 'F', description: 'cap each PyTorch process at this fraction of each GPU (0 < F ≤ 1), applied before its first allocation' },
];

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'doctor',
    summary: 'GPU status and findings in one screen (the default command)',
    usage: 'doctor [options]',
    description:
      'The status table (GPUs, their processes with user, memory, age, utilisation over the window and role) and every finding of `gpumem diagnose`, one line of fix each. Without any GPU access (no driver) it shows the bundled example recording and says so in its first line. See docs/diagnose.md.',
    options: [WINDOW_OPTION, JSON_OPTION, ...SOURCE_OPTIONS],
    examples: ['gpumem', 'gpumem doctor --window 10', 'gpumem doctor --replay examples/doctor-example.ndjson'],
    exits: ['1 when there are findings, 0 when there are none'],
  },
  {
    name: 'diagnose',
    summary: 'account for every byte on every GPU and name what is wrong, with evidence and fixes',
    usage: 'diagnose [options]',
    description:
      'Samples the GPUs over a window (default 3 s; with --replay the whole recording is the window) and accounts per GPU: used = processes visible here + processes not visible in this PID namespace + unattributed, with driver-reserved memory beside it; processes grouped into trees (launcher → ranks → DataLoader workers) with totals per tree and per user. Then runs every rule (duplicate runs, workers holding CUDA contexts, other users, idle notebook kernels, orphans, zombies, vanished pids, wrong GPU, device order, idle or input-bound jobs, allocator config, memory near capacity) and lists findings by severity with the numbers and a fix. See docs/diagnose.md.',
    options: [WINDOW_OPTION, JSON_OPTION, ...SOURCE_OPTIONS],
    examples: ['gpumem diagnose', 'gpumem diagnose --window 10 --json', 'gpumem diagnose --replay examples/doctor-example.ndjson'],
    exits: ['1 when there are findings, 0 when there are none'],
  },
  {
    name: 'status',
    summary: 'GPUs and the processes using them',
    usage: 'status [options]',
    description:
      'One row per GPU (memory used/total with the driver-reserved part, utilisation, temperature, power) and under it the processes on it: pid, user, GPU memory, age, command, container, and a marker for pids that do not exist in this PID namespace (host pids seen from a container). Sizes match nvidia-smi to the MiB. See docs/status.md for the --json schema.',
    options: [
      JSON_OPTION,
      { name: 'watch', short: 'w', type: 'boolean', description: 'refresh until Ctrl-C (a recording: until it ends)' },
      { name: 'interval', type: 'number', value: 'MS', default: 2000, description: 'refresh interval for --watch, in milliseconds' },
      ...SOURCE_OPTIONS,
    ],
    examples: ['gpumem status', 'gpumem status --json', 'gpumem status --watch --interval 1000', 'gpumem status --replay run.gpumem.ndjson'],
    exits: ['3 when no GPU can be read (no NVML, no nvidia-smi)'],
  },
  {
    name: 'record',
    summary: 'record GPU state to a file that any command can read with --replay',
    usage: 'record --out FILE [options]',
    description:
      'Writes a versioned NDJSON recording: a header line (format, version, host, note), then one sample (all GPUs and their processes with host facts) per line. Stops after --duration or at Ctrl-C; every sample written before is kept. See docs/recording.md.',
    options: [
      { name: 'out', short: 'o', type: 'string', value: 'FILE', description: 'the recording to write (replaced if it exists)' },
      { name: 'interval', type: 'number', value: 'MS', default: 1000, description: 'time between samples, in milliseconds' },
      { name: 'duration', type: 'number', value: 'S', description: 'stop after this many seconds (default: until Ctrl-C)' },
      { name: 'note', type: 'string', value: 'TEXT', description: 'free text stored in the header (what was running)' },
      ...SOURCE_OPTIONS,
    ],
    examples: ['gpumem record --out train.gpumem.ndjson --interval 500 --duration 600', 'gpumem status --replay train.gpumem.ndjson'],
    exits: ['3 when no GPU can be read'],
  },
  {
    name: 'run',
    summary: 'run a training command on the right GPUs, watched, with OOM retry and verified cleanup',
    usage: 'run [options] -- CMD [ARGS…]',
    description:
      'Pins the chosen GPUs by UUID (CUDA_VISIBLE_DEVICES + CUDA_DEVICE_ORDER=PCI_BUS_ID), merges expandable_segments:True into PYTORCH_CUDA_ALLOC_CONF unless you set that key, checks free memory first, watches the whole process tree at 10 Hz (peak per GPU, memory on GPUs not chosen), forwards Ctrl-C/TERM to the child\'s process group, ends leftover workers and checks the memory is released. For a PyTorch program the companion (on unless --no-companion) splits each GPU\'s memory into allocated / reserved-unallocated / non-PyTorch, captures the allocator\'s numbers at an OOM and, with --snapshot-on-oom, writes a memory snapshot into the run folder. `{batch}`/`{accum}` in the command (and GPUMEM_BATCH/GPUMEM_ACCUM) are filled from --batch/--accum; with --retry-oom N an OOM halves the batch and doubles accumulation. Exits with the child\'s status (128+n when killed by signal n). Every run is stored in the history (gpumem runs). See docs/run.md.',
    options: [
      { name: 'gpus', type: 'string', value: 'SPEC', description: 'GPUs to use: an index (2), a list (0,1,2), UUIDs, auto (the freest) or auto:N' },
      { name: 'no-alloc-conf', type: 'boolean', description: 'leave PYTORCH_CUDA_ALLOC_CONF as it is (no expandable_segments:True)' },
      { name: 'require-free', type: 'string', value: 'BYTES|PCT', description: 'refuse to start unless every chosen GPU has this much free memory (e.g. 20GiB or 30%)' },
      { name: 'batch', type: 'number', value: 'N', description: 'starting batch size for {batch} and GPUMEM_BATCH' },
      { name: 'accum', type: 'number', value: 'N', description: 'starting gradient accumulation for {accum} and GPUMEM_ACCUM (default 1)' },
      { name: 'retry-oom', type: 'number', value: 'N', default: 0, description: 'on CUDA OOM, retry up to N times with half the batch and double the accumulation' },
      { name: 'grace-ms', type: 'number', value: 'MS', default: 5000, description: 'wait between signal steps (forwarded signal → TERM → KILL) and before KILLing leftovers' },
      { name: 'cleanup-timeout-ms', type: 'number', value: 'MS', default: 10000, description: 'how long to wait for the run\'s GPU memory to be released after it exits' },
      { name: 'interval-ms', type: 'number', value: 'MS', default: 100, description: 'sampling interval of GPU memory and the process tree' },
      { name: 'db', type: 'string', value: 'PATH', description: 'run history database (default $XDG_DATA_HOME/gpumem/history.db)' },
      { name: 'no-history', type: 'boolean', description: 'do not store this run in the history' },
      ...COMPANION_OPTIONS,
      JSON_OPTION,
      ...SOURCE_OPTIONS,
    ],
    passthrough: true,
    examples: ['gpumem run --gpus 2 -- python train.py', 'gpumem run --gpus auto --batch 32 --retry-oom 3 -- python train.py --bs {batch} --accum {accum}'],
    exits: ['the child\'s exit status; 128+n when it was killed by signal n', '1 when pre-flight refused (--require-free)'],
  },
  {
    name: 'pipeline',
    summary: 'run stages (train → test → eval) on the same GPUs, cleanup verified between them',
    usage: 'pipeline [options] FILE.yaml',
    description:
      'Validates the whole file first (errors name the line and field), checks the GPUs, then runs each stage like `gpumem run`. Before the next stage starts, no process of the previous stage may be left and GPU memory must be back to its pre-stage level within --tolerance. See docs/pipeline.md.',
    args: [{ name: 'FILE', description: 'the pipeline file (YAML)', required: true }],
    options: [
      { name: 'from', type: 'string', value: 'STAGE', description: 'start at this stage (skip the ones before it)' },
      { name: 'check', type: 'boolean', description: 'only validate the file and show the plan' },
      { name: 'gpus', type: 'string', value: 'SPEC', description: 'GPUs for every stage that does not name its own (overrides the file\'s gpus)' },
      { name: 'tolerance', type: 'bytes', value: 'BYTES', default: '256MiB', description: 'how far above its pre-stage level GPU memory may be when the next stage starts' },
      { name: 'db', type: 'string', value: 'PATH', description: 'run history database (default $XDG_DATA_HOME/gpumem/history.db)' },
      { name: 'no-history', type: 'boolean', description: 'do not store this pipeline in the history' },
      ...COMPANION_OPTIONS,
      JSON_OPTION,
      ...SOURCE_OPTIONS,
    ],
    examples: ['gpumem pipeline examples/pipeline.yaml', 'gpumem pipeline train.yaml --from eval'],
    exits: ['1 when a stage failed or cleanup between stages did not pass; a stage killed by signal n: 128+n'],
  },
  {
    name: 'kill',
    summary: 'end stale GPU processes safely (TERM, grace, KILL; pid reuse checked)',
    usage: 'kill [options] [PID…]',
    description:
      'Selects GPU processes by pid and/or filters, shows what it will do and asks on a terminal. Only your own processes unless you are root and give --all-users. Right before each signal the pid\'s start time is re-read and compared, and the pid must still be on that GPU; otherwise it is skipped with the reason. Never pid 1, gpumem itself or its ancestors. See docs/kill.md.',
    args: [{ name: 'PID', description: 'process ids to end (must be GPU processes)', variadic: true }],
    options: [
      { name: 'gpu', type: 'list', value: 'INDEX', description: 'processes on these GPUs (index or UUID; repeatable or comma-separated)' },
      { name: 'orphans', type: 'boolean', description: 'processes whose parent died (re-parented to init or a subreaper)' },
      { name: 'zombie-holders', type: 'boolean', description: 'processes that hold GPU memory while a zombie or while stopped (T)' },
      { name: 'user', type: 'string', value: 'NAME', description: 'processes of this user (others than you need root and --all-users)' },
      { name: 'older-than', type: 'string', value: 'DURATION', description: 'processes started longer ago than this (e.g. 30m, 2h, 1d)' },
      { name: 'idle', type: 'boolean', description: 'processes with 0% SM utilisation in the sample' },
      { name: 'yes', short: 'y', type: 'boolean', description: 'do not ask' },
      { name: 'dry-run', type: 'boolean', description: 'only show what would be done' },
      { name: 'all-users', type: 'boolean', description: 'allow other users\' processes (root only)' },
      { name: 'grace-ms', type: 'number', value: 'MS', default: 5000, description: 'wait between TERM and KILL' },
      JSON_OPTION,
      ...SOURCE_OPTIONS,
    ],
    examples: ['gpumem kill --gpu 0 --orphans --dry-run', 'gpumem kill 12345 --yes'],
    exits: ['1 when a process could not be ended'],
  },
  {
    name: 'runs',
    summary: 'history of supervised runs and pipelines',
    usage: 'runs [options] [show ID]',
    args: [{ name: 'show ID', description: 'show one run in full' }],
    options: [
      { name: 'limit', type: 'number', value: 'N', default: 20, description: 'how many recent runs to list' },
      { name: 'db', type: 'string', value: 'PATH', description: 'run history database (default $XDG_DATA_HOME/gpumem/history.db)' },
      JSON_OPTION,
    ],
    examples: ['gpumem runs', 'gpumem runs show 12 --json'],
  },
  {
    name: 'explain',
    summary: 'find every out-of-memory error in logs, read its exact numbers, rank causes and fixes',
    usage: 'explain [FILE…|-] [options]',
    description:
      'Reads logs (files, globs, or stdin as -) streaming, finds every OOM message of PyTorch (CUDA, cudaMallocAsync, ROCm, XPU, MPS), the CUDA runtime, cuBLAS, cuDNN, NCCL, JAX/XLA and TensorFlow, de-duplicates repeats across ranks, and explains each with ranked causes and fixes. Needs no GPU. Exit 0: no OOM found; 1: at least one found. JSON schema: docs/explain.md.',
    args: [{ name: 'FILE', description: 'log files or globs; - (or nothing) reads stdin', variadic: true }],
    options: [
      JSON_OPTION,
      { name: 'follow', short: 'f', type: 'boolean', description: 'keep reading a growing log and explain each OOM as it appears (until Ctrl-C; --json prints one object per line)' },
      { name: 'live', type: 'boolean', description: 'cross-check the pids in the message against the GPUs now, and use this shell\'s PYTORCH_CUDA_ALLOC_CONF and CUDA_VISIBLE_DEVICES' },
      { name: 'alloc-conf', type: 'string', value: 'VALUE', description: 'the run\'s PYTORCH_CUDA_ALLOC_CONF (so fixes do not suggest what was already set)' },
      { name: 'visible-devices', type: 'string', value: 'LIST', description: 'the run\'s CUDA_VISIBLE_DEVICES (maps the message\'s GPU index to the physical GPU)' },
      ...SOURCE_OPTIONS,
    ],
    examples: ['explain train.log', 'explain "logs/*.err" --json', 'python train.py 2>&1 | gpumem explain -', 'explain --follow train.log'],
    exits: ['0: no OOM found', '1: at least one OOM found'],
  },
  {
    name: 'snapshot',
    summary: 'analyse a PyTorch memory snapshot without executing it (totals, fragmentation, who holds memory, timeline)',
    usage: 'snapshot [options] FILE | snapshot diff A B',
    description:
      'Reads a file written by torch.cuda.memory._dump_snapshot() (pickle protocols 2–5, or JSON) with a data-only reader that refuses any opcode naming a Python object, so an untrusted file cannot run code; files of several GB are streamed. Shows per device reserved/allocated/active/requested bytes, fragmentation per pool and stream (largest free block vs total free), the allocation sites holding memory (the innermost frame outside torch), and from the trace the peak and the live set at each OOM. `snapshot diff A B` lists what grew between two snapshots, by site. See docs/snapshot.md.',
    args: [
      { name: 'FILE', description: 'the snapshot (.pickle from _dump_snapshot, or .json)', required: true },
      { name: 'diff A B', description: 'compare two snapshots by allocation site' },
    ],
    options: [
      JSON_OPTION,
      { name: 'html', type: 'string', value: 'OUT', description: 'also write a self-contained HTML report (timeline as inline SVG, no network)' },
      { name: 'top', type: 'number', value: 'N', default: 10, description: 'how many allocation sites to list' },
      { name: 'request', type: 'bytes', value: 'BYTES', description: 'could a request of this size be served from reserved memory? (e.g. 600MiB)' },
    ],
    examples: ['gpumem snapshot oom_snapshot.pickle', 'gpumem snapshot oom_snapshot.pickle --request 600MiB --html report.html', 'gpumem snapshot diff before.pickle after.pickle'],
    exits: ['2 when the file is not a snapshot, is damaged, or holds objects other than data (refused, never executed)'],
  },
  {
    name: 'estimate',
    summary: 'predict training memory by phase and stage; the largest batch that fits; accumulation',
    usage: 'estimate [MODEL] [options] | estimate [options] -- python train.py … | estimate --entry MOD:FN',
    passthrough: true,
    description:
      'With a command after -- (or --entry), traces the real training step on fake tensors (no GPU, no weights) and replays it: peak by phase, module and category, and what nvidia-smi would show. Otherwise predicts the GPU memory of a training setup from a model\'s safetensors header (only the header is read), a sharded index, a Hugging Face config.json (gpt2, bert, llama, mistral, qwen2/3, vit) or --params. Prints the breakdown at the peak phase (forward end, backward, optimizer step); with --gpu the largest batch that fits with a margin, with --effective-batch the accumulation, with --stages each stage\'s peak and which one breaks. Formulas and their sources: docs/estimate.md.',
    args: [{ name: 'MODEL', description: 'model.safetensors, a model folder, model.safetensors.index.json or config.json' }],
    options: [
      { name: 'params', type: 'string', value: 'N', description: 'parameter count instead of a file (7B, 350M, 124439808)' },
      { name: 'layers', type: 'number', value: 'N', description: 'with --params: transformer layers (enables the activation model)' },
      { name: 'hidden', type: 'number', value: 'N', description: 'with --params: hidden size' },
      { name: 'heads', type: 'number', value: 'N', description: 'with --params: attention heads (default hidden/128)' },
      { name: 'kv-heads', type: 'number', value: 'N', description: 'with --params: key/value heads for GQA (default = heads)' },
      { name: 'intermediate', type: 'number', value: 'N', description: 'with --params: MLP width (default 8·hidden/3 rounded up to 256, SwiGLU)' },
      { name: 'vocab', type: 'number', value: 'N', description: 'with --params: vocabulary size (default 32000)' },
      { name: 'seq', type: 'number', value: 'N', description: 'sequence length (default: the config\'s maximum)' },
      { name: 'batch', short: 'b', type: 'number', value: 'N', default: 1, description: 'micro-batch size per GPU' },
      { name: 'precision', type: 'string', value: 'P', choices: ['fp32', 'amp-bf16', 'amp-fp16', 'bf16'], default: 'fp32', description: 'fp32; autocast with fp32 master weights (amp-*); or pure bf16' },
      { name: 'optimizer', type: 'string', value: 'OPT', choices: ['adamw', 'adam', 'sgd', 'sgd-momentum', 'adafactor', 'adam8bit'], default: 'adamw', description: 'optimizer whose states are counted' },
      { name: 'optimizer-impl', type: 'string', value: 'IMPL', choices: ['foreach', 'fused', 'for-loop'], default: 'foreach', description: 'PyTorch Adam implementation (foreach needs a parameter-sized temporary at the step)' },
      { name: 'freeze', type: 'list', value: 'PREFIX', description: 'module prefixes that do not train (repeatable or comma-separated)' },
      { name: 'lora-rank', type: 'number', value: 'R', description: 'train LoRA adapters of rank R instead of the weights' },
      { name: 'lora-modules', type: 'list', value: 'NAME', description: 'modules LoRA adapts (default q_proj,v_proj)' },
      { name: 'checkpointing', type: 'string', value: 'MODE', choices: ['none', 'selective', 'full'], default: 'none', description: 'activation (gradient) checkpointing' },
      { name: 'attention', type: 'string', value: 'IMPL', choices: ['sdpa', 'eager'], default: 'sdpa', description: 'attention kernel: SDPA/flash keeps no s² scores, eager does' },
      { name: 'ema', type: 'boolean', description: 'keep an EMA copy of the weights on the GPU' },
      { name: 'sharding', type: 'string', value: 'S', choices: ['none', 'zero1', 'zero2', 'zero3', 'fsdp'], default: 'none', description: 'ZeRO stage or FSDP (full shard) over --num-gpus' },
      { name: 'num-gpus', type: 'number', value: 'N', default: 1, description: 'data-parallel GPUs that --sharding spreads states over' },
      { name: 'activation-bytes-per-sample', type: 'bytes', value: 'BYTES', description: 'measured activation bytes per sample (from gpumem fit) for models without a transformer config' },
      { name: 'gpu', type: 'string', value: 'GPU', description: 'budget: a GPU name (H100-80GB, A100-40GB, T4-16GB…), auto (free memory of the live GPU) or a size' },
      { name: 'gpu-index', type: 'number', value: 'N', default: 0, description: 'with --gpu auto: which GPU' },
      { name: 'margin', type: 'number', value: 'PCT', default: 8, description: 'percent of the budget kept free for estimate error' },
      { name: 'effective-batch', type: 'number', value: 'N', description: 'global batch to reach with gradient accumulation' },
      { name: 'stages', type: 'string', value: 'SPEC', description: 'stages, e.g. "stage1:freeze=backbone,batch=2 stage2:full" (keys: freeze, full, batch, ckpt, act, lora)' },
      { name: 'unfreeze', type: 'list', value: 'GROUP', description: 'progressive unfreezing: module groups (A+B) in the order they are unfrozen' },
      { name: 'context', type: 'bytes', value: 'BYTES', description: 'CUDA context size (default by GPU generation, 512–640 MiB)' },
      { name: 'fragmentation', type: 'number', value: 'PCT', default: 5, description: 'allocator slack as percent of activations and transients' },
      { name: 'entry', type: 'string', value: 'MOD:FN', description: 'trace make_step() → (model, batch, step) instead of a command after --' },
      { name: 'steps', type: 'number', value: 'N', default: 2, description: 'training steps to trace (2 shows optimizer state and persistent gradients)' },
      { name: 'trace-timeout', type: 'number', value: 'S', default: 600, description: 'seconds a traced program may run before it is ended' },
      { name: 'python', type: 'string', value: 'PATH', default: 'python3', description: 'with --entry: the Python interpreter to run' },
      JSON_OPTION,
      ...SOURCE_OPTIONS,
    ],
    examples: [
      'gpumem estimate gpt2/config.json --precision amp-bf16 --batch 8 --seq 1024 --gpu H100-80GB',
      'gpumem estimate model.safetensors --activation-bytes-per-sample 1.4GiB --gpu auto --effective-batch 64',
      'gpumem estimate --params 7B --layers 32 --hidden 4096 --lora-rank 16 --precision bf16 --seq 2048',
      'gpumem estimate --gpu A100-40GB -- python train.py --batch-size 16',
    ],
    exits: ['1: the given batch, or a stage, does not fit the --gpu budget'],
  },
  {
    name: 'python-path',
    summary: 'print the folder to put on PYTHONPATH for the PyTorch companion (import gpumem_torch)',
    usage: 'python-path [options]',
    description:
      'Prints the folder that holds the gpumem_torch package shipped with gpumem, for scripts that use its explicit API ' +
      '(clear_cuda_memory, memory_info, track_memory, StepLogger…). `gpumem run` needs none of this: it puts the companion ' +
      'on the child\'s PYTHONPATH itself. See docs/companion.md.',
    options: [
      { name: 'site', type: 'boolean', description: 'print the folder with gpumem\'s sitecustomize.py instead (zero-code statistics, as `gpumem run` uses it)' },
      JSON_OPTION,
    ],
    examples: ['export PYTHONPATH="$(gpumem python-path):$PYTHONPATH"', 'python -c "import gpumem_torch; gpumem_torch.print_memory_info()"'],
  },
  {
    name: 'fit',
    summary: 'find the largest batch that fits by measuring a few short runs, verified',
    usage: 'fit [options] -- CMD… {batch}…',
    description:
      'Runs the command for a few steps ({steps} or GPUMEM_STEPS) in fresh processes at two probe batches, fits memory = fixed + per-sample × batch from the peak of the process tree, predicts the largest batch under the target fill of the GPU\'s free memory, and verifies it with one run; when the run disagrees with the line it takes a third point and bisects. It never reports a batch it did not run. See docs/fit.md.',
    options: [
      { name: 'steps', type: 'number', value: 'N', default: 5, description: 'training steps per run, for {steps} and GPUMEM_STEPS' },
      { name: 'probe', type: 'list', value: 'A,B', description: 'the two probe batch sizes (default 2,4)' },
      { name: 'fill', type: 'number', value: 'PCT', default: 90, description: 'target: this percent of the GPU\'s free memory at start' },
      { name: 'max-batch', type: 'number', value: 'N', default: 65536, description: 'never try a larger batch' },
      { name: 'max-runs', type: 'number', value: 'N', default: 10, description: 'stop after this many runs' },
      { name: 'effective-batch', type: 'number', value: 'N', description: 'global batch to reach with gradient accumulation' },
      { name: 'gpus', type: 'string', value: 'GPU', default: '0', description: 'the GPU to measure on (index or UUID); the command is pinned to it' },
      { name: 'interval-ms', type: 'number', value: 'MS', default: 100, description: 'memory sampling interval' },
      { name: 'no-companion', type: 'boolean', description: 'do not start the PyTorch companion in the probe runs (it counts OOMs the program catches itself)' },
      JSON_OPTION,
      ...SOURCE_OPTIONS,
    ],
    passthrough: true,
    examples: ['gpumem fit -- python train.py --batch-size {batch} --max-steps {steps}', 'gpumem fit --effective-batch 256 --json -- python train.py --bs {batch}'],
    exits: ['1: not even the smallest probe fits'],
  },
];

/** Looks a command up by name. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
