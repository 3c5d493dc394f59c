/** Options of the commands that read files and need no GPU: explain, snapshot, python-path (format: cli/spec.ts). */
import { defineCommand } from '../spec.js';
import { JSON_TABLE, SOURCE_TABLE, type JsonOption, type SourceOptions } from './shared.js';

export interface ExplainOptions extends JsonOption, SourceOptions {
  follow: boolean;
  live: boolean;
  allocConf: string | undefined;
  visibleDevices: string | undefined;
}

export const EXPLAIN = defineCommand<ExplainOptions>({
  name: 'explain',
  summary: 'find every out-of-memory error in logs, read its exact numbers, rank causes and fixes',
  usage: 'explain [FILE…|-] [options]',
  description:
    'Reads logs (files, globs, or stdin as -) streaming, finds every OOM message of PyTorch (CUDA, cudaMallocAsync, ROCm, XPU, MPS), the CUDA runtime, cuBLAS, cuDNN, NCCL, JAX/XLA and TensorFlow, de-duplicates repeats across ranks, and explains each with ranked causes and fixes. Needs no GPU. Exit 0: no OOM found; 1: at least one found. JSON schema: docs/explain.md.',
  args: [{ name: 'FILE', description: 'log files or globs; - (or nothing) reads stdin', variadic: true }],
  options: {
    ...JSON_TABLE,
    follow: { short: 'f', type: 'boolean', description: 'keep reading a growing log and explain each OOM as it appears (until Ctrl-C; --json prints one object per line)' },
    live: { type: 'boolean', description: 'cross-check the pids in the message against the GPUs now, and use this shell\'s PYTORCH_CUDA_ALLOC_CONF and CUDA_VISIBLE_DEVICES' },
    allocConf: { type: 'string', value: 'VALUE', allowEmpty: true, description: 'the run\'s PYTORCH_CUDA_ALLOC_CONF (so fixes do not suggest what was already set)' },
    visibleDevices: { type: 'string', value: 'LIST', allowEmpty: true, description: 'the run\'s CUDA_VISIBLE_DEVICES (maps the message\'s GPU index to the physical GPU)' },
    ...SOURCE_TABLE,
  },
  examples: ['explain train.log', 'explain "logs/*.err" --json', 'python train.py 2>&1 | gpumem explain -', 'explain --follow train.log'],
  exits: ['0: no OOM found', '1: at least one OOM found'],
});

export interface SnapshotOptions extends JsonOption {
  html: string | undefined;
  top: number;
  request: number | undefined;
  whatIf: string[] | undefined;
  simulate: boolean;
  torchVersion: string | undefined;
}

export const SNAPSHOT = defineCommand<SnapshotOptions>({
  name: 'snapshot',
  summary: 'analyse a PyTorch memory snapshot without executing it (totals, fragmentation, who holds memory, timeline)',
  usage: 'snapshot [options] FILE | snapshot diff A B',
  description:
    'Reads a file written by torch.cuda.memory._dump_snapshot() (pickle protocols 2–5, or JSON) with a data-only reader that refuses any opcode naming a Python object, so an untrusted file cannot run code; files of several GB are streamed. Shows per device reserved/allocated/active/requested bytes, fragmentation per pool and stream (largest free block vs total free), the allocation sites holding memory (the innermost frame outside torch), and from the trace the peak and the live set at each OOM. `snapshot diff A B` lists what grew between two snapshots, by site. See docs/snapshot.md.',
  args: [
    { name: 'FILE', description: 'the snapshot (.pickle from _dump_snapshot, or .json)', required: true },
    { name: 'diff A B', description: 'compare two snapshots by allocation site' },
  ],
  options: {
    ...JSON_TABLE,
    html: { type: 'string', path: true, value: 'OUT', description: 'also write a self-contained HTML report (timeline as inline SVG, no network)' },
    top: { type: 'number', value: 'N', integer: true, min: 1, default: 10, description: 'how many allocation sites to list' },
    request: { type: 'bytes', value: 'BYTES', description: 'could a request of this size be served from reserved memory? (e.g. 600MiB)' },
    whatIf: { type: 'list', wholeValues: true, value: 'SETTINGS', description: "replay the trace through the allocator simulation under these PYTORCH_CUDA_ALLOC_CONF settings (e.g. 'expandable_segments:True')" },
    simulate: { type: 'boolean', description: 'replay the trace under the settings the run used and report how closely the simulation matches the snapshot' },
    torchVersion: { type: 'string', value: 'X.Y', description: 'the PyTorch release the run used, for the rules and options that differ between releases (default: the newest)' },
  },
  examples: ['gpumem snapshot oom_snapshot.pickle', "gpumem snapshot oom_snapshot.pickle --what-if 'expandable_segments:True' --what-if 'max_split_size_mb:128'", 'gpumem snapshot oom_snapshot.pickle --request 600MiB --html report.html', 'gpumem snapshot diff before.pickle after.pickle'],
  exits: ['2 when the file is not a snapshot, is damaged, or holds objects other than data (refused, never executed)'],
});

export interface PythonPathOptions extends JsonOption {
  site: boolean;
}

export const PYTHON_PATH = defineCommand<PythonPathOptions>({
  name: 'python-path',
  summary: 'print the folder to put on PYTHONPATH for the PyTorch companion (import gpumem_torch)',
  usage: 'python-path [options]',
  description:
    'Prints the folder that holds the gpumem_torch package shipped with gpumem, for scripts that use its explicit API ' +
    '(clear_cuda_memory, memory_info, track_memory, StepLogger…). `gpumem run` needs none of this: it puts the companion ' +
    'on the child\'s PYTHONPATH itself. See docs/companion.md.',
  options: {
    site: { type: 'boolean', description: 'print the folder with gpumem\'s sitecustomize.py instead (zero-code statistics, as `gpumem run` uses it)' },
    ...JSON_TABLE,
  },
  examples: ['export PYTHONPATH="$(gpumem python-path):$PYTHONPATH"', 'python -c "import gpumem_torch; gpumem_torch.print_memory_info()"'],
});
