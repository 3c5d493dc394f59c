/**
 * What people paste: pieces of a message (cut at its start or end), status names in lower case, a pid
 * removed by hand, and messages that look like an OOM but are not one of device memory
 * (test/fixtures/oom/corpus-fragments.json). Also: an OOM never borrows another exception's traceback.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OOM_MARKER_PHRASES, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

interface Entry {
  id: string;
  source_url: string | null;
  kind: 'fragment' | 'whole' | 'not-oom' | 'wrapper';
  text: string;
  expected: Record<string, unknown> | null;
}

const corpus = JSON.parse(readFileSync(new URL('../../fixtures/oom/corpus-fragments.json', import.meta.url), 'utf8')) as Entry[];
const byId = (id: string): Entry => corpus.find((e) => e.id === id) as Entry;
const big = (v: unknown): bigint | null => (v === undefined || v === null ? null : BigInt(v as number));

describe('pasted pieces and look-alikes', () => {
  for (const entry of corpus) {
    it(`${entry.id} (${entry.kind})`, () => {
      const events = parseOomText(entry.text);
      if (entry.expected === null) {
        expect(events).toEqual([]);
        return;
      }
      expect(events).toHaveLength(1);
      const e = events[0] as OomEvent;
      const x = entry.expected;
      expect(e.family).toBe(x.family);
      expect(e.partial).toBe(x.partial);
      const pairs: Array<[keyof OomEvent, string]> = [
        ['requestedBytes', 'requested_bytes'], ['totalBytes', 'total_bytes'], ['freeBytes', 'free_bytes'],
        ['allocatedByPytorchBytes', 'allocated_by_pytorch_bytes'], ['reservedUnallocatedBytes', 'reserved_unallocated_bytes'],
        ['reservedTotalBytes', 'reserved_total_bytes'],
      ];
      for (const [field, key] of pairs) if (key in x) expect(e[field], key).toBe(big(x[key]));
      if ('gpu_index' in x) expect(e.gpuIndex).toBe(x.gpu_index);
      if ('other_processes' in x) {
        expect(e.otherProcesses).toEqual((x.other_processes as Array<{ pid: number | null; bytes: number }>).map((p) => ({ pid: p.pid, bytes: big(p.bytes) })));
      }
    });
  }

  it('status names in any case', () => {
    for (const text of ['RuntimeError: cuDNN error: cudnn_status_alloc_failed', 'CUBLAS_STATUS_ALLOC_FAILED', 'cublas_status_alloc_failed when calling `cublasCreate(handle)`']) {
      expect(parseOomText(text).map((e) => e.family), text).toEqual([/cudnn/i.test(text) ? 'cudnn' : 'cublas']);
    }
  });

  it('the hint sentence alone is a piece of a message: partial, with the variable it names', () => {
    const [e] = parseOomText('If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.');
    expect([e?.family, e?.partial, e?.hintVariable, e?.requestedBytes]).toEqual(['pytorch-hip', true, 'PYTORCH_HIP_ALLOC_CONF', null]);
  });

  it('a training log line with one generic field is not an OOM', () => {
    expect(parseOomText('epoch 3 step 120: 12.30 GiB already allocated, 20.00 GiB total capacity')).toHaveLength(1);
    expect(parseOomText('epoch 3 step 120: 12.30 GiB already allocated')).toEqual([]);
    expect(parseOomText('memory: 3.10 GiB free; nothing else')).toEqual([]);
  });

  it('a field of a whole message is never taken for a second, cut message', () => {
    const whole = byId('old-v3-001').text;
    expect(parseOomText(`${whole}\n${whole.replace('16.00 MiB', '32.00 MiB')}`)).toHaveLength(2);
  });
});

/**
 * Every number a piece prints is read exactly (property, on word-boundary cuts of real messages). The scanner
 * looks at lines holding a marker phrase, so only cuts that hold one are pieces it can find.
 */
describe('cut messages keep every number they contain', () => {
  const v5 = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.12 GiB is free. Process 48213 has 6.20 GiB memory in use. Including non-PyTorch memory, this process has 16.30 GiB memory in use. Of the allocated memory 11.93 GiB is allocated by PyTorch, and 3.84 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)';
  /** Field, the words that print it, and where the message may naturally end. */
  const cases: Array<{ text: string; phrases: Array<[keyof OomEvent, string]>; ends: string[] }> = [
    {
      text: byId('old-v2-001').text.trim(),
      phrases: [['requestedBytes', 'Tried to allocate 2.26 GiB'], ['gpuIndex', '(GPU 0;'], ['totalBytes', '6.00 GiB total capacity'], ['allocatedByPytorchBytes', '781.59 MiB already allocated'], ['freeBytes', '3.03 GiB free;'], ['reservedTotalBytes', '1.24 GiB reserved in total by PyTorch']],
      ends: ['PyTorch)'],
    },
    {
      text: byId('old-v3-001').text,
      phrases: [['requestedBytes', 'Tried to allocate 16.00 MiB'], ['gpuIndex', '(GPU 0;'], ['totalBytes', '3.94 GiB total capacity'], ['allocatedByPytorchBytes', '2.98 GiB already allocated'], ['freeBytes', '14.25 MiB free;'], ['reservedTotalBytes', '3.00 GiB reserved in total by PyTorch']],
      ends: ['PyTorch)', 'PYTORCH_CUDA_ALLOC_CONF'],
    },
    {
      text: v5,
      phrases: [['requestedBytes', 'Tried to allocate 1.70 GiB'], ['gpuIndex', 'GPU 0 has a total'], ['totalBytes', 'total capacity of 23.64 GiB'], ['freeBytes', 'of which 1.12 GiB is free'], ['processInUseBytes', 'this process has 16.30 GiB memory in use'], ['allocatedByPytorchBytes', '11.93 GiB is allocated by PyTorch'], ['reservedUnallocatedBytes', '3.84 GiB is reserved by PyTorch but unallocated']],
      ends: ['environment-variables)'],
    },
  ];

  for (const [n, c] of cases.entries()) {
    it(`message ${n + 1}`, () => {
      const whole = parseOomText(c.text)[0] as OomEvent;
      const spaces = [0, ...[...c.text.matchAll(/ /g)].map((m) => (m.index as number) + 1), c.text.length];
      fc.assert(
        fc.property(fc.nat(spaces.length - 1), fc.nat(spaces.length - 1), (a, b) => {
          const [from, to] = [spaces[Math.min(a, b)] as number, spaces[Math.max(a, b)] as number];
          const cut = c.text.slice(from, to).trim();
          const present = c.phrases.filter(([, words]) => cut.includes(words));
          const events = parseOomText(cut);
          if (present.length === 0 || !OOM_MARKER_PHRASES.some((p) => cut.toLowerCase().includes(p))) return;
          // A lone generic field ("6.00 GiB total capacity;") is not recognisably an OOM: a head, a distinctive field or two fields are.
          const words = ['Tried to allocate', 'reserved in total by PyTorch', 'is reserved by PyTorch but unallocated', 'is allocated by PyTorch', 'this process has', 'of which'];
          const distinctive = present.some(([, phrase]) => words.some((w) => phrase.includes(w)));
          if (!distinctive && present.length < 2 && !/max_split_size_mb|expandable_segments|out of memory/i.test(cut)) {
            expect(events, cut).toEqual([]);
            return;
          }
          expect(events.length, cut).toBeGreaterThanOrEqual(1);
          const e = events[0] as OomEvent;
          for (const [field] of present) expect(e[field], `${String(field)} in "${cut}"`).toEqual(whole[field]);
          // A number never read wrongly: a field is either the whole message's value or not read.
          for (const [field] of c.phrases) if (e[field] !== null) expect(e[field], `${String(field)} in "${cut}"`).toEqual(whole[field]);
          for (const p of e.otherProcesses) expect(whole.otherProcesses, `process in "${cut}"`).toContainEqual(p);
          const natural = cut.includes('CUDA out of memory. Tried') && c.ends.some((end) => cut.endsWith(end));
          expect(e.partial, cut).toBe(!natural);
        }),
        { numRuns: 400 },
      );
    });
  }

  it('the tail of a message alone: "… 4.74 GiB reserved in total by PyTorch"', () => {
    const [e] = parseOomText('… 4.74 GiB reserved in total by PyTorch)');
    expect([e?.family, e?.reservedTotalBytes, e?.partial]).toEqual(['pytorch-cuda', 5089536246n, true]);
  });
});

describe('tracebacks belong to their own exception', () => {
  const frames = ['Traceback (most recent call last):', '  File "/home/u/train.py", line 88, in main', '    loss = model(x)'];

  it('an OOM right after another OOM does not borrow its "your code" frame', () => {
    const text = [...frames, 'RuntimeError: CUDA error: out of memory', 'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.'].join('\n');
    const events = parseOomText(text);
    expect(events.map((e) => [e.family, e.userFrame?.line ?? null])).toEqual([['cuda-runtime', 88], ['vllm-kv-cache', null]]);
  });

  it('nor the frame of another exception just above it', () => {
    const text = [...frames, 'ValueError: bad shape', 'RuntimeError: CUDA error: out of memory'].join('\n');
    expect(parseOomText(text)[0]?.userFrame).toBeNull();
  });

  it('an exception header whose message follows keeps its frames (Paddle)', () => {
    const text = [...frames, 'RuntimeError: ResourceExhaustedError:', '', 'Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and available memory is only 0.000000B.'].join('\n');
    expect(parseOomText(text)[0]?.userFrame).toEqual({ file: '/home/u/train.py', line: 88, function: 'main' });
  });
});
