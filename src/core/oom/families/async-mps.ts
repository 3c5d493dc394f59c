/**
 * PyTorch's two allocators with their own wording: the cudaMallocAsync backend (`Allocation on device N
 * would exceed allowed memory`, one padded line per number, SIZE_MAX as "no limit") and Apple MPS (KB/MB/GB
 * labels that divide by 1024, `max allowed` from the high-watermark ratio, `Invalid buffer size`).
 */
import { SIZE_SOURCE } from '../size.js';
import { blankFields, clip, exceptionBefore, FieldCursor, headFinder, searchFrom, type Recognized, type Recognizer } from './base.js';
import { readSizeField } from './size-field.js';

const S = SIZE_SOURCE;
const ASYNC_HEAD = /Allocation on device(?: (\d{1,3}))? ?(?:would exceed allowed memory|$)/gim;
const CURRENT = new RegExp(String.raw`Currently allocated ?: ?${S}`, 'gi');
const REQUESTED = new RegExp(String.raw`Requested ?: ?${S}`, 'gi');
const LIMIT = new RegExp(String.raw`Device limit ?: ?${S}`, 'gi');
const FREE = new RegExp(String.raw`Free \(according to CUDA\) ?: ?${S}`, 'gi');
const PYTORCH_LIMIT = new RegExp(String.raw`PyTorch limit \(set by user-supplied memory fraction\) ?: ?${S}`, 'gi');

const MPS_HEAD = /MPS backend out of memory|Invalid buffer size: ?/gi;
const MPS_ALLOCATED = new RegExp(String.raw`MPS allocated: ?${S}`, 'gi');
const MPS_OTHER = new RegExp(String.raw`other allocations: ?${S}`, 'gi');
const MPS_MAX = new RegExp(String.raw`max allowed: ?${S}`, 'gi');
const MPS_REQUEST = new RegExp(String.raw`Tried to allocate ${S} on (private|shared) pool`, 'gi');
const MPS_BUFFER = new RegExp(String.raw`Invalid buffer size: ?${S}`, 'gi');


export const cudaMallocAsync: Recognizer = {
  findHead: headFinder(ASYNC_HEAD),
  read(text, start, limit): Recognized {
    const head = searchFrom(ASYNC_HEAD, text, start) as RegExpExecArray;
    const fields = blankFields('pytorch-cuda-async');
    fields.exceptionClass = exceptionBefore(text, start);
    const cur = new FieldCursor(text, start, limit, head.index + head[0].length);
    if (head[1] !== undefined) {
      fields.gpuIndex = Number(head[1]);
      cur.count++;
    } else {
      fields.era = { version: '2.4–2.9', evidence: 'message cut after "Allocation on device" (device-index bug)' };
    }
    const read = (re: RegExp, field: 'allocatedByPytorchBytes' | 'requestedBytes' | 'totalBytes' | 'freeBytes' | 'allowedBytes'): boolean => {
      const m = cur.take(re);
      if (!m) return false;
      const size = readSizeField(fields, field, m[1], m[2]);
      fields[field] = size.bytes;
      if (size.sentinel) {
        fields.unavailable[field] = field === 'allowedBytes' ? 'SIZE_MAX: no memory fraction set' : 'printed as the 17179869184.00 GiB sentinel';
      }
      return true;
    };
    read(CURRENT, 'allocatedByPytorchBytes');
    read(REQUESTED, 'requestedBytes');
    read(LIMIT, 'totalBytes');
    read(FREE, 'freeBytes');
    const complete = read(PYTORCH_LIMIT, 'allowedBytes');
    fields.message = clip(text, start, cur.end);
    return { fields, start, end: cur.end, fieldCount: cur.count, wants: complete ? 'none' : 'any' };
  },
};

export const mps: Recognizer = {
  findHead: headFinder(MPS_HEAD),
  read(text, start, limit): Recognized {
    const head = searchFrom(MPS_HEAD, text, start) as RegExpExecArray;
    const fields = blankFields('pytorch-mps');
    fields.exceptionClass = exceptionBefore(text, start);
    const cur = new FieldCursor(text, start, limit, head.index + head[0].length);
    const grab = (re: RegExp): RegExpExecArray | null => cur.take(re);
    if (/^Invalid/i.test(head[0])) {
      const buffer = grab(MPS_BUFFER);
      fields.requestedBytes = readSizeField(fields, 'requestedBytes', buffer?.[1], buffer?.[2]).bytes;
      fields.message = clip(text, start, cur.end);
      return { fields, start, end: cur.end, fieldCount: cur.count, wants: 'none' };
    }
    const allocated = grab(MPS_ALLOCATED);
    const other = grab(MPS_OTHER);
    const max = grab(MPS_MAX);
    const request = grab(MPS_REQUEST);
    fields.mps = {
      mpsAllocatedBytes: readSizeField(fields, 'mps.mpsAllocatedBytes', allocated?.[1], allocated?.[2]).bytes,
      otherAllocationsBytes: readSizeField(fields, 'mps.otherAllocationsBytes', other?.[1], other?.[2]).bytes,
      pool: request ? ((request[3] as string).toLowerCase() as 'private' | 'shared') : null,
    };
    fields.allowedBytes = readSizeField(fields, 'allowedBytes', max?.[1], max?.[2]).bytes;
    fields.requestedBytes = readSizeField(fields, 'requestedBytes', request?.[1], request?.[2]).bytes;
    if (allocated && /\d (?:KB|MB|GB)\b/.test(text.slice(start, cur.end))) {
      fields.era = { version: '≤2.5', evidence: 'KB/MB/GB labels of the old MPS formatter' };
    }
    fields.message = clip(text, start, cur.end);
    return { fields, start, end: cur.end, fieldCount: cur.count, wants: request ? 'none' : 'any' };
  },
};
