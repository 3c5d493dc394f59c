/**
 * What every family recognizer returns, and the blank record they fill in. A recognizer finds the first
 * message of its family at or after a position and reads its fields from the text up to `limit` (the next
 * message's start), so two messages pasted on one line never mix their numbers.
 */
import type { OomEvent, OomFamily, OomFramework } from '../types.js';

/** An event before the scanner adds where it was seen (line numbers, ranks, traceback frame). */
export type OomFields = Omit<OomEvent, 'line' | 'lines' | 'ranks' | 'userFrame'>;

/**
 * What a block still accepts from the next line: `any` (the message is cut short, a wrapped line may
 * follow), `hint` (only a wrapped piece of the allocator hint), `nccl` (the calloc line, after blanks),
 * `ggml` (llama.cpp's "failed to allocate X buffer of size N" line), `none` (complete).
 */
export type Wants = 'any' | 'hint' | 'nccl' | 'ggml' | 'none';

export interface Recognized {
  fields: OomFields;
  /** Offsets of the message in the searched text. */
  start: number;
  end: number;
  /** How many fields were read: lets the scanner pick the better of two ways to join a wrapped line. */
  fieldCount: number;
  wants: Wants;
  /**
   * Reads numbers a library prints on the lines before its message (DeepSpeed's Requested/Free/Total): given
   * the text before the message, fills them in. Absent for families that print everything in the message.
   */
  readBefore?: (preceding: string) => void;
}

export interface Recognizer {
  /** Start offset of the next head of this family at or after `from`, or -1. */
  findHead(text: string, from: number): number;
  /** Reads the message whose head is at `start`; fields are searched in `text.slice(start, limit)`. */
  read(text: string, start: number, limit: number): Recognized;
}

const FRAMEWORK: Record<OomFamily, OomFramework> = {
  'pytorch-cuda': 'pytorch',
  'pytorch-cuda-async': 'pytorch',
  'pytorch-hip': 'pytorch',
  'pytorch-xpu': 'pytorch',
  'pytorch-mps': 'pytorch',
  'cuda-runtime': 'pytorch',
  cublas: 'pytorch',
  cudnn: 'pytorch',
  nccl: 'nccl',
  xla: 'jax',
  tensorflow: 'tensorflow',
  cupy: 'cupy',
  paddle: 'paddle',
  'ggml-cuda': 'llama.cpp',
  'ggml-metal': 'llama.cpp',
  'ggml-vulkan': 'llama.cpp',
  'vllm-kv-cache': 'vllm',
  onnxruntime: 'onnxruntime',
  tensorrt: 'tensorrt',
  mxnet: 'mxnet',
  numba: 'numba',
  deepspeed: 'deepspeed',
};

/** Moves a record to another family (and that family's framework) once its text shows which. */
export function setFamily(fields: OomFields, family: OomFamily): void {
  fields.family = family;
  fields.framework = FRAMEWORK[family];
}

/** A record of `family` with every number unknown. */
export function blankFields(family: OomFamily): OomFields {
  return {
    family,
    framework: FRAMEWORK[family],
    exceptionClass: null,
    era: null,
    gpuIndex: null,
    requestedBytes: null,
    totalBytes: null,
    freeBytes: null,
    processInUseBytes: null,
    allocatedByPytorchBytes: null,
    reservedUnallocatedBytes: null,
    reservedTotalBytes: null,
    allowedBytes: null,
    privatePoolBytes: null,
    otherProcesses: [],
    unavailable: {},
    requestMoreThan1EB: false,
    mps: null,
    tensor: null,
    kvCache: null,
    poolBytes: null,
    backend: null,
    partial: false,
    hintVariable: null,
    message: '',
  };
}

/** Runs a non-global regex from `from` with a sticky copy-free search; returns the match or null. */
export function searchFrom(re: RegExp, text: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(text);
}

const EXCEPTION_RE =
  /(cupy\.cuda\.memory\.OutOfMemoryError|numba\.cuda\.cudadrv\.driver\.CudaAPIError|mxnet\.base\.MXNetError|paddle\.fluid\.core\.EnforceNotMet|onnxruntime\.capi\.onnxruntime_pybind11_state\.RuntimeException|torch\.cuda\.OutOfMemoryError|torch\.OutOfMemoryError|torch\.AcceleratorError|torch\.distributed\.DistBackendError|jaxlib\.xla_extension\.XlaRuntimeError|XlaRuntimeError|ResourceExhaustedError|OutOfMemoryError|AcceleratorError|CudaAPIError|MXNetError|EnforceNotMet|RuntimeException|ValueError|RuntimeError)\b/g;

/** The last Python exception class printed in the 120 characters before `start`. */
export function exceptionBefore(text: string, start: number): string | null {
  const from = Math.max(0, start - 120);
  let last: string | null = null;
  EXCEPTION_RE.lastIndex = from;
  for (let m = EXCEPTION_RE.exec(text); m && m.index < start; m = EXCEPTION_RE.exec(text)) last = m[1] as string;
  return last;
}

/** A whole number printed with optional thousands separators ("25,600,000") as bigint. */
export function wholeBytes(printed: string): bigint {
  return BigInt(printed.replace(/,/g, ''));
}

/** Caps the stored message so one event never holds a pathological line. */
export function clip(text: string, start: number, end: number): string {
  return text.slice(start, Math.min(end, start + 4096)).trim();
}

/** What a one-regex recognizer reports beyond its fields: how many it read and, when not the head's end, where the message ends. */
export interface HeadRead {
  count: number;
  end?: number;
  wants?: Wants;
  readBefore?: (preceding: string) => void;
}

/**
 * A recognizer for a message whose head regex carries most of its numbers: `fill` reads the match (and any
 * field after it, up to `limit`) into a blank record of `family`.
 */
export function headRecognizer(
  re: RegExp,
  family: OomFamily,
  fill: (m: RegExpExecArray, fields: OomFields, text: string, start: number, limit: number) => HeadRead,
): Recognizer {
  return {
    findHead: headFinder(re),
    read(text, start, limit): Recognized {
      const m = searchFrom(re, text, start) as RegExpExecArray;
      const fields = blankFields(family);
      fields.exceptionClass = exceptionBefore(text, start);
      const got = fill(m, fields, text, start, limit);
      const end = got.end ?? m.index + m[0].length;
      fields.message = clip(text, start, limit);
      const result: Recognized = { fields, start, end, fieldCount: 1 + got.count, wants: got.wants ?? 'none' };
      if (got.readBefore) result.readBefore = got.readBefore;
      return result;
    },
  };
}

/** A recognizer's `findHead`: the offset of the next match of `re` at or after `from`, or -1. */
export function headFinder(re: RegExp): Recognizer['findHead'] {
  return (text, from) => {
    const m = searchFrom(re, text, from);
    return m ? m.index : -1;
  };
}

/**
 * A `findHead` for a head whose pattern opens with a long optional prefix (which V8 then tries at every
 * offset of the text): first finds the literal `needle` every match contains, then runs `re` only from
 * `reach` characters before it. The earliest match starts no earlier than that, as no match spans more.
 */
export function prefilteredHeadFinder(re: RegExp, needle: RegExp, reach: number): Recognizer['findHead'] {
  return (text, from) => {
    needle.lastIndex = from;
    const hit = needle.exec(text);
    if (!hit) return -1;
    const m = searchFrom(re, text, Math.max(from, hit.index - reach));
    return m ? m.index : -1;
  };
}

/** Finds `re` inside [from, limit); returns the match or null. */
export function within(re: RegExp, text: string, from: number, limit: number): RegExpExecArray | null {
  const m = searchFrom(re, text, from);
  return m && m.index + m[0].length <= limit ? m : null;
}

/**
 * Reads one message's fields: each match found inside the message extends how far the message reaches
 * (`end`) and counts as a field read (`count`), which the scanner uses to judge wrapped lines.
 */
export class FieldCursor {
  end: number;
  count = 0;

  constructor(private readonly text: string, private readonly start: number, private readonly limit: number, headEnd: number) {
    this.end = headEnd;
  }

  /** The first match of `re` inside the message, noted; null when the message does not print it. */
  take(re: RegExp): RegExpExecArray | null {
    const m = within(re, this.text, this.start, this.limit);
    if (m) this.note(m);
    return m;
  }

  /** Extends the message over a match without counting it as a field (numbers read from a cut sentence). */
  extend(m: RegExpExecArray): void {
    this.end = Math.max(this.end, m.index + m[0].length);
  }

  /** Notes a match found another way (e.g. a loop over repeated process lines). */
  note(m: RegExpExecArray): void {
    this.end = Math.max(this.end, m.index + m[0].length);
    this.count++;
  }
}
