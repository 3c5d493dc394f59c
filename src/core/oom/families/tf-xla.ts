/**
 * JAX/XLA (`RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes`, exact bytes) and
 * TensorFlow (`OOM when allocating tensor with shape[…] and type T on …device:GPU:N`, the BFC allocator's
 * `ran out of memory trying to allocate 120.70MiB`, and the driver's `failed to allocate 4.00G (N bytes)`).
 */
import { SIZE_SOURCE } from '../size.js';
import { blankFields, clip, exceptionBefore, headFinder, searchFrom, type Recognized, type Recognizer } from './base.js';
import { readSize } from './size-field.js';

const XLA_HEAD = /(?:RESOURCE_EXHAUSTED|Resource exhausted): ?(?:Out of memory (?:while trying to allocate|allocating) (\d{1,20}) ?bytes|XLA:\w{1,10} compile permanent error\. Ran out of memory in memory space (\w{1,20}))/gi;
const TF_HEAD = new RegExp(
  String.raw`OOM when allocating tensor with shape ?\[([\d, ]{0,200})\] and type (\w{1,20})(?: on [^ ]{0,200}?device:GPU:(\d{1,3}))?(?: by allocator (\w{1,40}))?` +
    String.raw`|Allocator \((\w{1,40})\) ran out of memory trying to allocate ${SIZE_SOURCE}` +
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
  if (m[1] !== undefined) fields.requestedBytes = BigInt(m[1]);
  const end = m.index + m[0].length;
  fields.message = clip(text, start, limit);
  return { fields, start, end, fieldCount: m[1] !== undefined ? 2 : 1, wants: 'none' };
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
    fields.requestedBytes = readSize(m[6], m[7]).bytes;
    const gpu = /GPU_(\d{1,3})_bfc/i.exec(m[5]);
    if (gpu) fields.gpuIndex = Number(gpu[1]);
    count++;
  } else if (m[10] !== undefined) {
    fields.requestedBytes = BigInt(m[10]);
    count++;
  }
  const end = m.index + m[0].length;
  fields.message = clip(text, start, limit);
  return { fields, start, end, fieldCount: count, wants: 'none' };
});
