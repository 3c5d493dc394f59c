/**
 * PyTorch's caching-allocator message in every generation (reference §A.2): THC `cuda runtime error (2)`,
 * v1 `cached`, v2 `reserved in total by PyTorch` (+ `allowed`), v3 max_split_size_mb hint, v4 2.1
 * `capacty` with NVML process lines, v5+ expandable_segments hint, private pools, the PYTORCH_ALLOC_CONF
 * and docs.pytorch.org hints, the 2.3 NUL-truncated `… GPU`, and `more than 1EB`. HIP and XPU builds print
 * the same words with their own device name.
 */
import { SIZE_SOURCE } from '../size.js';
import type { OomFamily } from '../types.js';
import { blankFields, clip, exceptionBefore, FieldCursor, headFinder, searchFrom, within, type Recognized, type Recognizer, type Wants } from './base.js';
import { readSizeField } from './size-field.js';
import { isOtherProcess, OTHER_PROCESS, readPieces } from './pytorch-pieces.js';

const S = SIZE_SOURCE;
const HEAD = new RegExp(String.raw`(?:(CUDA|HIP|XPU) out of memory ?\.? ?|(?<!(?:CUDA|HIP|XPU) )out of memory ?\.? ?|(?<!out of memory ?\.? ?))Tried to allocate (?:(more than 1EB)|${S}(?! on (?:private|shared) pool))|\b(CUDA|HIP|XPU) out of memory|cuda runtime error ?\(2\) ?: ?out of memory`, 'gi');
const GPU_OLD = /\(GPU (\d{1,3});/gi;
const TOTAL_OLD = new RegExp(String.raw`; ?${S} total capacity`, 'gi');
const ALLOCATED_OLD = new RegExp(String.raw`; ?${S} already allocated`, 'gi');
const FREE_OLD = new RegExp(String.raw`; ?${S} free;`, 'gi');
const CACHED_OLD = new RegExp(String.raw`; ?${S} cached\b`, 'gi');
const RESERVED_OLD = new RegExp(String.raw`; ?${S} reserved in total by PyTorch`, 'gi');
const ALLOWED = new RegExp(String.raw`[;.] ?${S} allowed;`, 'gi');
const CAPACITY_NEW = new RegExp(String.raw`GPU (\d{1,3}) has a total (capacity|capacty) of ${S} of which ${S} is free`, 'gi');
const THIS_PROCESS = new RegExp(String.raw`this process has ${S} memory in use`, 'gi');
const ALLOCATED_NEW = new RegExp(String.raw`Of the allocated memory ${S} is allocated by PyTorch`, 'gi');
const PRIVATE_POOLS = new RegExp(String.raw`with ${S} allocated in private pools`, 'gi');
const UNALLOCATED_NEW = new RegExp(String.raw`and ${S} is reserved by PyTorch but unallocated`, 'gi');
const HINT_VAR = /(PYTORCH_[A-Z]{0,6}_?ALLOC_CONF)=expandable_segments/gi;
const TRUNCATED_GPU = /Tried to allocate [^ ]{1,30} ?[A-Za-z]{1,5}\. GPU *$/i;
const COMPLETE_TAIL = /environment-variables\)|pytorch-cuda-alloc-conf\)|and PYTORCH_CUDA_ALLOC_CONF|and PYTORCH_HIP_ALLOC_CONF|release all unoccupied cached memory|more than 1EB memory/i;


function familyOf(device: string | undefined): OomFamily {
  const d = (device ?? 'CUDA').toUpperCase();
  return d === 'HIP' ? 'pytorch-hip' : d === 'XPU' ? 'pytorch-xpu' : 'pytorch-cuda';
}

export const pytorchCaching: Recognizer = {
  findHead: headFinder(HEAD),

  read(text, start, limit): Recognized {
    const head = searchFrom(HEAD, text, start) as RegExpExecArray;
    const fields = blankFields(familyOf(head[1] ?? head[5]));
    fields.exceptionClass = exceptionBefore(text, start);
    const cur = new FieldCursor(text, start, limit, head.index + head[0].length);
    const take = (re: RegExp): RegExpExecArray | null => cur.take(re);
    const size = (value: string | undefined, unit: string | undefined, field: string): bigint | null => {
      const read = readSizeField(fields, field, value, unit);
      if (read.sentinel) fields.unavailable[field] = 'printed as 17179869184.00 GiB (the "not available" sentinel)';
      return read.bytes;
    };

    // "Tried to allocate" without "CUDA out of memory." before it: the paste starts inside the message.
    const cutStart = head[1] === undefined && (head[2] !== undefined || head[3] !== undefined);
    if (/cuda runtime error/i.test(head[0])) {
      fields.era = { version: '≤0.4', evidence: 'THC "cuda runtime error (2)" wording' };
      return { fields, start, end: cur.end, fieldCount: 1, wants: 'none' };
    }
    if (head[2]) {
      fields.requestMoreThan1EB = true;
      fields.partial = cutStart;
      fields.requestedBytes = 1n << 60n;
      fields.message = clip(text, start, cur.end + 8);
      return { fields, start, end: cur.end, fieldCount: 1, wants: 'none' };
    }
    if (head[3] !== undefined) {
      fields.requestedBytes = size(head[3], head[4], 'requestedBytes');
      cur.count++;
    }

    const gpuOld = take(GPU_OLD);
    const capacity = take(CAPACITY_NEW);
    const allowed = take(ALLOWED);
    if (allowed) fields.allowedBytes = size(allowed[1], allowed[2], 'allowedBytes');
    let core = false;
    if (gpuOld) {
      fields.gpuIndex = Number(gpuOld[1]);
      const total = take(TOTAL_OLD);
      const allocated = take(ALLOCATED_OLD);
      const free = take(FREE_OLD);
      const cached = take(CACHED_OLD);
      const reserved = take(RESERVED_OLD);
      if (total) fields.totalBytes = size(total[1], total[2], 'totalBytes');
      if (allocated) fields.allocatedByPytorchBytes = size(allocated[1], allocated[2], 'allocatedByPytorchBytes');
      if (free) fields.freeBytes = size(free[1], free[2], 'freeBytes');
      if (cached) fields.reservedUnallocatedBytes = size(cached[1], cached[2], 'reservedUnallocatedBytes');
      if (reserved) fields.reservedTotalBytes = size(reserved[1], reserved[2], 'reservedTotalBytes');
      core = Boolean(cached ?? reserved);
    } else if (capacity) {
      fields.gpuIndex = Number(capacity[1]);
      fields.totalBytes = size(capacity[3], capacity[4], 'totalBytes');
      fields.freeBytes = size(capacity[5], capacity[6], 'freeBytes');
      const self = take(THIS_PROCESS);
      if (self) fields.processInUseBytes = size(self[1], self[2], 'processInUseBytes');
      for (let m = within(OTHER_PROCESS, text, start, limit); m; m = within(OTHER_PROCESS, text, m.index + m[0].length, limit)) {
        if (!isOtherProcess(m)) continue;
        cur.note(m);
        const read = readSizeField(fields, `otherProcesses.${m[1] ?? 'hidden'}`, m[2], m[3]);
        fields.otherProcesses.push({ pid: m[1] === undefined ? null : Number(m[1]), bytes: read.bytes });
        if (read.sentinel) fields.unavailable[`otherProcesses.${m[1] ?? 'hidden'}`] = 'printed as 17179869184.00 GiB (the "not available" sentinel)';
      }
      const allocated = take(ALLOCATED_NEW);
      const pools = take(PRIVATE_POOLS);
      const unallocated = take(UNALLOCATED_NEW);
      if (allocated) fields.allocatedByPytorchBytes = size(allocated[1], allocated[2], 'allocatedByPytorchBytes');
      if (pools) fields.privatePoolBytes = size(pools[1], pools[2], 'privatePoolBytes');
      if (unallocated) fields.reservedUnallocatedBytes = size(unallocated[1], unallocated[2], 'reservedUnallocatedBytes');
      core = Boolean(unallocated);
    }
    // A message cut inside a sentence ("… a total capacity of 23.64 GiB of wh"): keep the numbers still there.
    if (!core) readPieces(text, head.index + head[0].length, limit, fields, cur);
    const hint = take(HINT_VAR);
    if (hint) fields.hintVariable = (hint[1] as string).toUpperCase();
    const body = text.slice(start, limit);
    const hintFrom = Math.max(0, cur.end - start - 8);
    const done = COMPLETE_TAIL.exec(body.slice(hintFrom, hintFrom + 400));
    // The closing words of the hint end the message exactly, even before the last field read.
    const end = done ? start + hintFrom + done.index + done[0].length : cur.end;
    fields.era = eraOf(body, fields.exceptionClass, capacity?.[2] ?? null, Boolean(gpuOld));
    fields.message = clip(text, start, end);
    // Whole when the hint's closing words were read, or (v1–v3, no hint) the field list closed with ")".
    // (A hint begun after the ")" but not finished is a cut one.)
    const closed = done !== null || (gpuOld !== null && core && /^\)(?!\s*If\b)/i.test(text.slice(cur.end, cur.end + 8)));
    // A 2.3-style head ends whole at its last field, unless words of a later wording dangle after it
    // ("… Tried to allocate 1.70 GiB. GPU" is a newer message cut before "0 has a total capacity").
    const dangling = /^[.\s]*GPU\b/.test(text.slice(cur.end, limit));
    fields.partial = cutStart || (!closed && (fields.era?.version !== '2.3' || dangling));
    const wants: Wants = done ? 'none' : core ? 'hint' : 'any';
    return { fields, start, end, fieldCount: cur.count, wants };
  },
};

/** The release range the wording pins down (reference §A.7 step 6). */
function eraOf(body: string, exceptionClass: string | null, capacityWord: string | null, old: boolean): { version: string; evidence: string } | null {
  if (capacityWord && capacityWord.toLowerCase() === 'capacty') return { version: '2.1', evidence: '"capacty" typo' };
  if (/docs\.pytorch\.org\/docs\/stable\/notes\/cuda\.html#optimizing/i.test(body)) return { version: '≥2.11', evidence: 'docs.pytorch.org hint link' };
  if (/try setting PYTORCH_ALLOC_CONF=/i.test(body)) return { version: '2.9–2.10', evidence: 'PYTORCH_ALLOC_CONF hint' };
  if (/allocated in private pools/i.test(body)) return { version: '≥2.4', evidence: 'private-pools wording' };
  if (exceptionClass === 'torch.OutOfMemoryError') return { version: '≥2.4', evidence: 'torch.OutOfMemoryError class' };
  if (capacityWord) return { version: '≥2.2', evidence: '"total capacity of … is free" wording' };
  if (TRUNCATED_GPU.test(body.trimEnd())) return { version: '2.3', evidence: 'message cut at "GPU" (2.3 device-index bug)' };
  if (!old) return null;
  if (/ cached\b/i.test(body)) return { version: '1.0–1.3', evidence: '"cached" wording' };
  if (/max_split_size_mb/i.test(body)) {
    if (exceptionClass === 'RuntimeError') return { version: '1.10–1.12', evidence: 'max_split_size_mb hint with RuntimeError' };
    if (exceptionClass?.includes('OutOfMemoryError')) return { version: '1.13–2.0', evidence: 'max_split_size_mb hint with OutOfMemoryError' };
    return { version: '1.10–2.0', evidence: 'max_split_size_mb hint' };
  }
  if (/reserved in total by PyTorch\)/i.test(body)) return { version: '1.4–1.9', evidence: '"reserved in total" without a hint' };
  return null;
}
