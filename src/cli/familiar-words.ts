/**
 * The verbs of the scripts people use before gpumem (`gpu_memory_manager.py --info/--clear/--monitor/
 * --suggest-batch-size/--kill-processes`, `memory_utils.py info|clear|reset|fraction|enable|kill`,
 * `memory_profiler.py --find-optimal`). Where the meaning is the same, the word is an alias of a command
 * (spec `aliases`); where it is not, typing it answers with the command that does the job and why, instead
 * of "unknown command". Help, docs/cli.md and the README's table read this list.
 */
import { GpumemError } from '../core/errors.js';

export interface FamiliarWord {
  /** The words, without dashes; `gpumem WORD` and `gpumem --WORD` both answer. */
  words: readonly string[];
  /** Where people know it from, for the docs table. */
  from: string;
  /** What gpumem does instead (the error line after the quoted word). */
  answer: string;
  /** The commands to run (the hint line). */
  hint: string;
}

/** Words that are not gpumem commands, each answered with the command that does its job. */
export const FAMILIAR_WORDS: readonly FamiliarWord[] = [
  {
    words: ['clear', 'free', 'empty-cache', 'release'],
    from: 'gpu_memory_manager.py --clear, memory_utils.py clear',
    answer: 'no tool can empty another process\'s PyTorch cache; only the process itself can. From outside, gpumem ends the processes that are left over',
    hint: 'what holds the memory: gpumem doctor; end leftovers: gpumem kill --orphans --dry-run (then without --dry-run); inside your script: del the tensors, gc.collect(), torch.cuda.empty_cache(); in Jupyter: %load_ext gpumem_torch, then %gpumem (docs/kill.md, docs/notebooks.md)',
  },
  {
    words: ['suggest-batch-size', 'find-optimal', 'optimal-batch-size', 'max-batch-size'],
    from: 'gpu_memory_manager.py --suggest-batch-size, memory_profiler.py --find-optimal',
    answer: 'the largest batch that fits is predicted by gpumem estimate (a traced step on the CPU, no GPU needed) and measured by gpumem fit (at most 3 short runs)',
    hint: 'gpumem estimate --gpu A100-40GB -- python train.py --batch-size {batch}, or gpumem fit -- python train.py --batch-size {batch} --max-steps {steps} (docs/estimate.md, docs/fit.md)',
  },
  {
    words: ['kill-processes', 'kill-all'],
    from: 'gpu_memory_manager.py --kill-processes',
    answer: 'ending GPU processes is gpumem kill: it shows what it will end and asks, checks each pid again right before the signal, and never ends one part of a live job',
    hint: 'gpumem kill --gpu 0 --orphans --dry-run, then the same without --dry-run; or gpumem kill PID (docs/kill.md)',
  },
  {
    words: ['reset'],
    from: 'memory_utils.py reset',
    answer: 'gpumem does not reset GPUs or another process\'s counters; a process resets its own peak with torch.cuda.reset_peak_memory_stats()',
    hint: 'to get memory back, end leftover processes: gpumem kill --orphans --dry-run; a whole-GPU reset is nvidia-smi --gpu-reset -i N (root, and no process may use that GPU)',
  },
  {
    words: ['fraction', 'set-fraction'],
    from: 'memory_utils.py fraction',
    answer: 'a per-process memory cap is set inside the process, torch.cuda.set_per_process_memory_fraction(F); gpumem tells you what fits and puts the run on the GPU you name',
    hint: 'what fits: gpumem estimate --gpu … or gpumem fit; run on GPU N: gpumem run --gpus N -- python train.py (docs/estimate.md, docs/run.md)',
  },
  {
    words: ['enable', 'expandable-segments'],
    from: 'memory_utils.py enable',
    answer: 'gpumem run switches PyTorch\'s expandable segments on for the runs it supervises (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, merged with your own value, which wins)',
    hint: 'gpumem run -- python train.py (docs/run.md); without gpumem run: export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True',
  },
];

/** The answer to `gpumem WORD` or `gpumem --WORD` when WORD is one of FAMILIAR_WORDS, else null. */
export function familiarWordError(token: string): GpumemError | null {
  const word = token.replace(/^--?/, '');
  const entry = FAMILIAR_WORDS.find((f) => f.words.includes(word));
  if (!entry) return null;
  return new GpumemError('UNKNOWN_COMMAND', `"${token}" is not a gpumem command: ${entry.answer}`, { hint: entry.hint });
}

/** `--info` → `info`: the flag form of a command's alias, so `gpumem --info` runs status. Null otherwise. */
export function aliasFlag(token: string, isAlias: (word: string) => boolean): string | null {
  if (!token.startsWith('--')) return null;
  const word = token.slice(2);
  return isAlias(word) ? word : null;
}
