/**
 * A piece of PyTorch's caching-allocator message without its head: the tail a user pasted ("… 4.74 GiB
 * reserved in total by PyTorch"), the middle of a long line, or the hint sentence alone. Every field the piece
 * prints is read exactly; the event is marked partial. The scanner looks for a piece only before the first
 * whole message of a block, so a message's own fields are never taken for a second, cut one.
 */
import { SIZE_SOURCE } from '../size.js';
import { blankFields, clip, exceptionBefore, FieldCursor, headFinder, within, type Recognized, type Recognizer } from './base.js';
import { OTHER_PROCESS } from './pytorch-caching.js';
import { readSize } from './size-field.js';

const S = SIZE_SOURCE;
const HEAD = new RegExp(
  [
    String.raw`${S} (?:total capacity|already allocated|reserved in total by PyTorch|is allocated by PyTorch|is reserved by PyTorch but unallocated)`,
    String.raw`GPU \d{1,3} has a total capac?ity of`,
    String.raw`process has ${S} memory in use`,
    String.raw`try setting (?:PYTORCH_[A-Z]{0,6}_?ALLOC_CONF=expandable_segments|max_split_size_mb)`,
  ].join('|'),
  'gi',
);

type SizeField = 'totalBytes' | 'freeBytes' | 'allocatedByPytorchBytes' | 'reservedUnallocatedBytes' | 'reservedTotalBytes' | 'processInUseBytes' | 'privatePoolBytes' | 'allowedBytes';

/** Each field as it may appear in a piece: without the "; " that precedes it in a whole message. */
const FIELDS: Array<[RegExp, SizeField]> = [
  [new RegExp(String.raw`${S} total capacity`, 'gi'), 'totalBytes'],
  [new RegExp(String.raw`total capac?ity of ${S}`, 'gi'), 'totalBytes'],
  [new RegExp(String.raw`${S} free;|of which ${S} is free`, 'gi'), 'freeBytes'],
  [new RegExp(String.raw`${S} already allocated|${S} is allocated by PyTorch`, 'gi'), 'allocatedByPytorchBytes'],
  [new RegExp(String.raw`${S} cached\b|${S} is reserved by PyTorch but unallocated`, 'gi'), 'reservedUnallocatedBytes'],
  [new RegExp(String.raw`${S} reserved in total by PyTorch`, 'gi'), 'reservedTotalBytes'],
  [new RegExp(String.raw`this process has ${S} memory in use`, 'gi'), 'processInUseBytes'],
  [new RegExp(String.raw`with ${S} allocated in private pools`, 'gi'), 'privatePoolBytes'],
  [new RegExp(String.raw`${S} allowed;`, 'gi'), 'allowedBytes'],
];
const GPU = /\(?GPU (\d{1,3})(?:;| has a total)/gi;
const HINT_VAR = /(PYTORCH_[A-Z]{0,6}_?ALLOC_CONF)=expandable_segments/gi;

export const pytorchFragment: Recognizer = {
  findHead: headFinder(HEAD),
  read(text, start, limit): Recognized {
    const fields = blankFields('pytorch-cuda');
    fields.partial = true;
    fields.exceptionClass = exceptionBefore(text, start);
    const cur = new FieldCursor(text, start, limit, start);
    for (const [re, field] of FIELDS) {
      const m = cur.take(re);
      if (!m) continue;
      // Alternations put the size in the first or the second pair of captures.
      fields[field] = readSize(m[1] ?? m[3], m[2] ?? m[4]).bytes;
    }
    const gpu = cur.take(GPU);
    if (gpu) fields.gpuIndex = Number(gpu[1]);
    for (let p = within(OTHER_PROCESS, text, start, limit); p; p = within(OTHER_PROCESS, text, p.index + p[0].length, limit)) {
      cur.note(p);
      fields.otherProcesses.push({ pid: p[1] === undefined ? null : Number(p[1]), bytes: readSize(p[2], p[3]).bytes });
    }
    const hint = cur.take(HINT_VAR);
    if (hint) {
      fields.hintVariable = (hint[1] as string).toUpperCase();
      if (fields.hintVariable.includes('HIP')) fields.family = 'pytorch-hip';
    }
    const hintEnd = /(?:environment-variables|pytorch-cuda-alloc-conf|PYTORCH_CUDA_ALLOC_CONF|PYTORCH_HIP_ALLOC_CONF)\)?/gi;
    hintEnd.lastIndex = cur.end;
    const tail = hintEnd.exec(text);
    const end = tail && tail.index < limit && tail.index - cur.end < 300 ? tail.index + tail[0].length : Math.max(cur.end, start + 1);
    fields.message = clip(text, start, end);
    return { fields, start, end, fieldCount: cur.count, wants: hint ? 'none' : 'hint' };
  },
};
