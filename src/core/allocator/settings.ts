/**
 * Allocator settings: what `PYTORCH_CUDA_ALLOC_CONF` (or `PYTORCH_ALLOC_CONF`) sets for the native CUDA caching
 * allocator, parsed with the tokenizer and checks of c10/cuda/CUDAAllocatorConfig.cpp (`lexArgs`, `parseArgs`,
 * `parseMaxSplitSize`, `parseGarbageCollectionThreshold`, `parseRoundUpPower2Divisions`), so a string PyTorch
 * refuses is refused here with the same reason.
 */
import { GpumemError } from '../errors.js';
import { LARGE_BUFFER_BYTES, ROUNDUP_INTERVALS } from './sizes.js';
import { optionExists } from './versions.js';
import { MiB } from '../units.js';

export interface AllocatorSettings {
  /** Blocks of this size or more are never split; Infinity = unlimited (PyTorch's SIZE_MAX, the default). */
  maxSplitSizeBytes: number;
  /** An oversize cached block serves a request only if it is less than this much larger (default 20 MiB). */
  maxNonSplitRoundingBytes: number;
  /** Divisions per power-of-two interval, index 0 = sizes below 2 MiB … 15 = 32 GiB and above; 0 or 1 = off. */
  roundupPower2Divisions: number[];
  /** Fraction of the allowed memory above which cached blocks are reclaimed; 0 = off. Acts only with a memory fraction set. */
  garbageCollectionThreshold: number;
  expandableSegments: boolean;
  /** Changes only when the lock is held around cudaMalloc: nothing the simulation can see. */
  releaseLockOnCudaMalloc: boolean;
  /** Host (pinned) memory settings: read and ignored, they do not touch device memory. */
  pinnedUseCudaHostRegister: boolean;
  pinnedNumRegisterThreads: number;
  /** `native` or `cudaMallocAsync`; the simulation models the native allocator only. */
  backend: 'native' | 'cudaMallocAsync';
}

/** The settings PyTorch uses when the variable is unset. */
export function defaultAllocatorSettings(): AllocatorSettings {
  return {
    maxSplitSizeBytes: Infinity,
    maxNonSplitRoundingBytes: LARGE_BUFFER_BYTES,
    roundupPower2Divisions: new Array<number>(ROUNDUP_INTERVALS).fill(0),
    garbageCollectionThreshold: 0,
    expandableSegments: false,
    releaseLockOnCudaMalloc: false,
    pinnedUseCudaHostRegister: false,
    pinnedNumRegisterThreads: 1,
    backend: 'native',
  };
}

function bad(text: string, reason: string): GpumemError {
  return new GpumemError('USAGE', `allocator settings "${text.replace(/[^\x20-\x7e]/g, '?')}": ${reason}`, {
    hint: "write them as PyTorch does, e.g. 'expandable_segments:True,max_split_size_mb:128'",
  });
}

/** Splits like `lexArgs`: `,` `:` `[` `]` are tokens of their own, spaces vanish, everything else joins. */
function lex(text: string): string[] {
  const tokens: string[] = [];
  let buf = '';
  for (const ch of text) {
    if (ch === ',' || ch === ':' || ch === '[' || ch === ']') {
      if (buf !== '') tokens.push(buf);
      buf = '';
      tokens.push(ch);
    } else if (ch !== ' ') buf += ch;
  }
  if (buf !== '') tokens.push(buf);
  return tokens;
}

/** std::stoi / stoul / stod: a leading number, trailing characters ignored, none at all is an error. */
function leadingNumber(text: string, token: string | undefined, float: boolean): number {
  const match = (token ?? '').match(float ? /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/ : /^[+-]?\d+/);
  if (!match) throw bad(text, `expected a number, found "${token ?? 'nothing'}"`);
  return Number(match[0]);
}

const isPowerOf2 = (n: number): boolean => Number.isInteger(n) && n > 0 && Number.isInteger(Math.log2(n));

/**
 * Parses an allocator configuration string the way PyTorch does; unknown options, missing `:`/`,`, out-of-range
 * values and malformed `roundup_power2_divisions` lists throw GpumemError('USAGE') naming the reason.
 */
export function parseAllocatorConf(text: string, options: { base?: AllocatorSettings; version?: string | null } = {}): AllocatorSettings {
  const base = options.base ?? defaultAllocatorSettings();
  const s: AllocatorSettings = { ...base, roundupPower2Divisions: [...base.roundupPower2Divisions] };
  const t = lex(text);
  const expect = (i: number, c: string): void => {
    if (t[i] !== c) throw bad(text, `expected "${c}" after "${t[i - 1] ?? ''}"`);
  };
  const bool = (i: number, name: string): boolean => {
    if (t[i] !== 'True' && t[i] !== 'False') throw bad(text, `expected a single True/False argument for ${name}`);
    return t[i] === 'True';
  };
  for (let i = 0; i < t.length; i++) {
    const key = t[i] as string;
    if (!optionExists(key, options.version)) throw bad(text, `unrecognized CachingAllocator option: ${key} (PyTorch ${options.version ?? ''} does not have it)`);
    switch (key) {
      case 'max_split_size_mb': {
        expect(++i, ':');
        if (++i >= t.length) throw bad(text, 'expecting a max_split_size_mb value');
        const mb = leadingNumber(text, t[i], false);
        if (!(mb > LARGE_BUFFER_BYTES / MiB)) throw bad(text, `max_split_size_mb too small, must be > ${LARGE_BUFFER_BYTES / MiB}`);
        s.maxSplitSizeBytes = mb * MiB;
        break;
      }
      case 'max_non_split_rounding_mb': {
        expect(++i, ':');
        if (++i >= t.length) throw bad(text, 'expecting a max_non_split_rounding_mb value');
        const mb = leadingNumber(text, t[i], false);
        if (!(mb > LARGE_BUFFER_BYTES / MiB)) throw bad(text, `max_non_split_rounding_mb too small, must be > ${LARGE_BUFFER_BYTES / MiB}`);
        s.maxNonSplitRoundingBytes = mb * MiB;
        break;
      }
      case 'garbage_collection_threshold': {
        expect(++i, ':');
        if (++i >= t.length) throw bad(text, 'expecting a garbage_collection_threshold value');
        const v = leadingNumber(text, t[i], true);
        if (!(v > 0)) throw bad(text, 'garbage_collect_threshold too small, set it 0.0~1.0');
        if (!(v < 1)) throw bad(text, 'garbage_collect_threshold too big, set it 0.0~1.0');
        s.garbageCollectionThreshold = v;
        break;
      }
      case 'roundup_power2_divisions':
        i = parseRoundup(text, t, i, s.roundupPower2Divisions);
        break;
      case 'expandable_segments':
        expect(++i, ':');
        s.expandableSegments = bool(++i, key);
        break;
      case 'release_lock_on_cudamalloc':
        expect(++i, ':');
        s.releaseLockOnCudaMalloc = bool(++i, key);
        break;
      case 'pinned_use_cuda_host_register':
        expect(++i, ':');
        s.pinnedUseCudaHostRegister = bool(++i, key);
        break;
      case 'pinned_num_register_threads': {
        expect(++i, ':');
        const n = leadingNumber(text, t[++i], false);
        if (!isPowerOf2(n) || n > 128) throw bad(text, 'pinned_num_register_threads must be a power of 2 up to 128');
        s.pinnedNumRegisterThreads = n;
        break;
      }
      case 'backend':
        expect(++i, ':');
        if (t[i + 1] !== 'native' && t[i + 1] !== 'cudaMallocAsync') throw bad(text, 'unknown allocator backend (native or cudaMallocAsync)');
        s.backend = t[++i] as 'native' | 'cudaMallocAsync';
        break;
      default:
        throw bad(text, `unrecognized CachingAllocator option: ${key}`);
    }
    if (i + 1 < t.length) expect(++i, ',');
  }
  return s;
}

/** `roundup_power2_divisions:N` (every interval) or `:[256:1,512:2,>:4]` (keys in MiB, `>` for all beyond). */
function parseRoundup(text: string, t: string[], start: number, out: number[]): number {
  let i = start;
  if (t[++i] !== ':') throw bad(text, 'expected ":" after roundup_power2_divisions');
  if (++i >= t.length) throw bad(text, 'error parsing roundup_power2_divisions value');
  if (t[i] !== '[') {
    const n = leadingNumber(text, t[i], false);
    if (!isPowerOf2(n)) throw bad(text, 'for roundups, the divisions have to be a power of 2');
    out.fill(n);
    return i;
  }
  let first = true;
  let lastIndex = 0;
  while (++i < t.length && t[i] !== ']') {
    const key = t[i];
    if (t[++i] !== ':') throw bad(text, `expected ":" after "${key}"`);
    if (++i >= t.length) throw bad(text, 'error parsing roundup_power2_divisions value');
    const divisions = leadingNumber(text, t[i], false);
    if (divisions !== 0 && !isPowerOf2(divisions)) throw bad(text, 'for roundups, the divisions have to be a power of 2 or 0 to disable roundup');
    if (key === '>') {
      out.fill(divisions, lastIndex);
    } else {
      const mb = leadingNumber(text, key, false);
      if (!isPowerOf2(mb)) throw bad(text, 'for roundups, the intervals have to be a power of 2');
      const index = Math.min(Math.floor(Math.log2(mb)), ROUNDUP_INTERVALS - 1);
      if (first) {
        out.fill(divisions, 0, index);
        first = false;
      }
      out[index] = divisions;
      lastIndex = index;
    }
    if (t[i + 1] !== ']') {
      if (t[++i] !== ',') throw bad(text, 'expected "," between roundup_power2_divisions entries');
    }
  }
  if (t[i] !== ']') throw bad(text, 'roundup_power2_divisions list is not closed with "]"');
  return i;
}

/**
 * The settings a snapshot's `allocator_settings` records (PyTorch 2.2 and later); defaults for older files.
 * `max_split_size` −1 means unlimited; `roundup_power2_divisions` maps interval sizes in MiB to divisions.
 */
export function settingsFromSnapshot(recorded: Record<string, unknown> | null): AllocatorSettings {
  const s = defaultAllocatorSettings();
  if (!recorded) return s;
  const n = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
  const maxSplit = n(recorded.max_split_size);
  if (maxSplit !== null && maxSplit > 0 && maxSplit < 2 ** 60) s.maxSplitSizeBytes = maxSplit;
  const gc = n(recorded.garbage_collection_threshold);
  if (gc !== null && gc > 0 && gc < 1) s.garbageCollectionThreshold = gc;
  if (recorded.expandable_segments === true) s.expandableSegments = true;
  if (recorded.release_lock_on_cudamalloc === true) s.releaseLockOnCudaMalloc = true;
  const rounds = recorded.roundup_power2_divisions;
  if (rounds && typeof rounds === 'object' && !Array.isArray(rounds)) {
    for (const [key, value] of Object.entries(rounds as Record<string, unknown>)) {
      const mb = Number(key);
      const div = n(value);
      if (Number.isInteger(mb) && mb > 0 && div !== null) s.roundupPower2Divisions[Math.min(Math.floor(Math.log2(mb)), ROUNDUP_INTERVALS - 1)] = div;
    }
  }
  return s;
}
