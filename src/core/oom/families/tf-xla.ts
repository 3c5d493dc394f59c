/**
 * JAX/XLA (`RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes`, exact bytes) and
 * TensorFlow (`OOM when allocating tensor with shape[…] and type T on …device:GPU:N`, the BFC allocator's
 * `ran out of memory trying to allocate 120.70MiB`, and the driver's `failed to allocate 4.00G (N bytes)`).
 */
import { SIZE_SOURCE } from '../size.js';
import { blankFields, clip, exceptionBefore, headFinder, searchFrom, setFamily, within, type Recognized, type Recognizer, type Wants } from './base.js';
import { readSizeField } from './size-field.js';

const XLA_HEAD = new RegExp(
  String.raw`(?:RESOURCE_EXHAUSTED|Resource exhausted): ?(?:Out of memory (?:while trying to allocate|allocating) (\d{1,20}) ?bytes|XLA:\w{1,10} compile permanent error\. Ran out of memory in memory space (\w{1,20}))` +
    // Older jaxlib (and a paste that starts at the failing call): the PJRT allocator's request with exact bytes.
    String.raw`|Failed to allocate request for ${SIZE_SOURCE} \((\d{1,20})B\)(?: on device ordinal (\d{1,3}))?` +
    // XLA's cudaMallocAsync allocator; the driver's free/total follow on the next line.
    String.raw`|cuMemAllocAsync failed to allocate (\d{1,20}) bytes(?:: ?RESOURCE_EXHAUSTED: ?:? ?CUDA_ERROR_OUT_OF_MEMORY(?:: out of memory)?)?` +
    // A line that ends inside the words (a hard wrap after "Resource exhausted: Out"): the next line completes it.
    String.raw`|(?:RESOURCE_EXHAUSTED|Resource exhausted):(?: ?Out(?: of)?)? ?$`,
  'gi',
);
const ASYNC_FREE_TOTAL = /Free memory\/Total memory: ?(\d{1,20})\/(\d{1,20})/gi;
const TF_HEAD = new RegExp(
  String.raw`OOM when allocating tensor with shape ?\[([\d, ]{0,200})\] and type (\w{1,20})(?: on [^ ]{0,200}?device:GPU:(\d{1,3}))?(?: by allocator (\w{1,40}))?` +
    String.raw`|Allocator \((\w{1,40})\) ran out of memory trying to allocate ${SIZE_SOURCE}(?: ?\(rounded to (\d{1,20})\))?` +
    String.raw`|failed to allocate ${SIZE_SOURCE} \((\d{1,20}) bytes\) from device: ?CUDA_ERROR_OUT_OF_MEMORY(?:: out of memory)?`,
  'gi',
);

/** Element sizes of TensorFlow dtype names. */
const DTYPE_BYTES: Record<string, number> = {
  float: 4, float32: 4, double: 8, float64: 8, half: 2, float16: 2, bfloat16: 2,
  int8: 1, uint8: 1, qint8: 1, quint8: 1, bool: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, qint32: 4,
  int64: 8, uint64: 8, complex64: 8, complex128: 16,
};

function recognizer(re: RegExp, read: (m: RegExpExecArray, text: string, start: number, limit: number) => Recognized): Recognizer {
  return {
    findHead: headFinder(re),
    read(text, start, limit) {
      return read(searchFrom(re, text, start) as RegExpExecArray, text, start, limit);
    },
  };
}

export const xla = recognizer(XLA_HEAD, (m, text, start, limit) => {
  const fields = blankFields('xla');
  fields.exceptionClass = exceptionBefore(text, start);
  let end = m.index + m[0].length;
  let count = 1;
  let wants: Wants = 'none';
  if (m[1] !== undefined) {
    fields.requestedBytes = BigInt(m[1]);
    count++;
  } else if (m[5] !== undefined) {
    fields.requestedBytes = BigInt(m[5]);
    if (m[6] !== undefined) fields.gpuIndex = Number(m[6]);
    fields.era = { version: 'jaxlib ≤0.3', evidence: '"Failed to allocate request for" wording' };
    fields.partial = !/(?:RESOURCE_EXHAUSTED|Resource exhausted): ?$/i.test(text.slice(Math.max(0, m.index - 24), m.index));
    count += m[6] !== undefined ? 2 : 1;
  } else if (m[1] === undefined && m[2] === undefined && m[7] === undefined) {
    fields.partial = true;
    wants = 'any';
  } else if (m[7] !== undefined) {
    fields.requestedBytes = BigInt(m[7]);
    count++;
    const freeTotal = within(ASYNC_FREE_TOTAL, text, end, limit);
    if (freeTotal) {
      fields.freeBytes = BigInt(freeTotal[1] as string);
      fields.totalBytes = BigInt(freeTotal[2] as string);
      end = freeTotal.index + freeTotal[0].length;
      count += 2;
    } else {
      wants = 'any';
    }
  }
  fields.message = clip(text, start, limit);
  return { fields, start, end, fieldCount: count, wants };
});

export const tensorflow = recognizer(TF_HEAD, (m, text, start, limit) => {
  const fields = blankFields('tensorflow');
  fields.exceptionClass = exceptionBefore(text, start);
  let count = 1;
  if (m[1] !== undefined) {
    const shape = m[1].split(',').map((d) => d.trim()).filter((d) => d !== '').map(Number);
    const dtype = (m[2] as string).toLowerCase();
    const element = DTYPE_BYTES[dtype];
    const bytes = element === undefined ? null : shape.reduce((acc, d) => acc * BigInt(d), BigInt(element));
    fields.tensor = { shape, dtype: m[2] as string, bytes };
    if (m[3] !== undefined) fields.gpuIndex = Number(m[3]);
    count += 1 + (m[3] !== undefined ? 1 : 0);
  } else if (m[5] !== undefined) {
    // "(rounded to N)" is the exact size the BFC allocator asked for; the unit figure is rounded.
    fields.requestedBytes = m[8] !== undefined ? BigInt(m[8]) : readSizeField(fields, 'requestedBytes', m[6], m[7]).bytes;
    const gpu = /GPU_(\d{1,3})_bfc/i.exec(m[5]);
    if (gpu) fields.gpuIndex = Number(gpu[1]);
    // JAX vendors the same BFC allocator; its log lines name XLA's copy of the source.
    if (/external\/org_tensorflow|external\/xla|xla\/tsl/i.test(text.slice(Math.max(0, start - 300), start))) setFamily(fields, 'xla');
    count++;
  } else if (m[11] !== undefined) {
    fields.requestedBytes = BigInt(m[11]);
    count++;
  }
  const end = m.index + m[0].length;
  fields.message = clip(text, start, limit);
  return { fields, start, end, fieldCount: count, wants: 'none' };
});
