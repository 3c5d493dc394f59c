/** Option groups several commands share, and the limits their rules use (see cli/spec.ts for the format). */
import type { SourceChoice } from '../../sources/open.js';
import type { GlobalOptions, OptionTable } from '../spec.js';

/** Upper bound of every millisecond option: a day, far below the 2^31 − 1 ms a timer can hold. */
export const MAX_MS = 86_400_000;

/** Accepted by every command. */
export const GLOBAL_TABLE = {
  help: { short: 'h', type: 'boolean', description: 'show help for the command and exit' },
  noColor: { type: 'boolean', description: 'plain output without colour (also when NO_COLOR is set or output is not a terminal)' },
} satisfies OptionTable<GlobalOptions>;

export interface SourceOptions {
  source: SourceChoice;
  replay: string | undefined;
  nvmlLib: string | undefined;
}

/** Where GPU state comes from; shared by every command that reads the GPUs. */
export const SOURCE_TABLE = {
  source: { type: 'string', value: 'KIND', choices: ['auto', 'nvml', 'smi'], default: 'auto', description: 'read the GPUs through NVML, nvidia-smi, or NVML with nvidia-smi as fallback' },
  replay: { type: 'string', path: true, value: 'FILE', description: 'read GPU state from a recording made by `gpumem record` instead of the GPUs' },
  nvmlLib: { type: 'string', path: true, value: 'PATH', description: 'path of libnvidia-ml.so.1 to load (also GPUMEM_NVML_LIB)' },
} satisfies OptionTable<SourceOptions>;

export interface JsonOption {
  json: boolean;
}

export const JSON_TABLE = {
  json: { type: 'boolean', description: 'print the result as JSON (documented, versioned schema)' },
} satisfies OptionTable<JsonOption>;

export interface HistoryOptions {
  db: string | undefined;
}

export const DB_TABLE = {
  db: { type: 'string', path: true, value: 'PATH', description: 'run history database (default $XDG_DATA_HOME/gpumem/history.db)' },
} satisfies OptionTable<HistoryOptions>;

/** The PyTorch companion under `gpumem run` and `gpumem pipeline` (docs/companion.md). */
export interface CompanionOptions {
  noCompanion: boolean;
  companionRate: number;
  snapshotOnOom: boolean;
  memoryFraction: number | undefined;
  forecastSteps: number;
  noSpikeWarning: boolean;
  noStepMemory: boolean;
}

export const COMPANION_TABLE = {
  noCompanion: { type: 'boolean', description: 'do not start the PyTorch companion (the child\'s environment is left as it is)' },
  companionRate: { type: 'number', value: 'HZ', min: 0, max: 100, default: 10, noun: 'a rate per second', description: 'PyTorch allocator statistics per second from the companion (0: only OOMs and the final numbers)' },
  snapshotOnOom: { type: 'boolean', description: 'record allocation history and write a PyTorch memory snapshot into the run folder on OOM' },
  memoryFraction: { type: 'number', value: 'F', min: 0, minExclusive: true, max: 1, noun: 'a fraction', description: 'cap each PyTorch process at this fraction of each GPU, applied before its first allocation' },
  forecastSteps: { type: 'number', value: 'N', integer: true, min: 0, max: 1_000_000_000, default: 1000, description: 'warn when the OOM forecast says memory growing step after step runs out within N steps (0: never); see docs/training-loop.md' },
  noSpikeWarning: { type: 'boolean', description: 'do not warn when the next periodic spike (an evaluation every N steps) is forecast not to fit' },
  noStepMemory: { type: 'boolean', description: 'do not record each step\'s peaks (no OOM forecast; the program\'s own torch.cuda.max_memory_allocated() is then left unreset)' },
} satisfies OptionTable<CompanionOptions>;
