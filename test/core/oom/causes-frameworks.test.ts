/**
 * Cause rules of the other frameworks, the fragmentation-first rule and the cut-message note: each fires on
 * the real message it is for (from the corpora) with its numbers, and not on others.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { explainOom, parseOomText, type Cause, type OomContext, type OomEvent } from '../../../src/core/oom/index.js';

const load = (name: string): Array<{ id: string; text: string }> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/oom/${name}`, import.meta.url), 'utf8')) as Array<{ id: string; text: string }>;
const texts = new Map([...load('corpus-frameworks.json'), ...load('corpus-fragments.json'), ...load('corpus-public.json')].map((e) => [e.id, e.text]));
const event = (id: string): OomEvent => parseOomText(texts.get(id) as string)[0] as OomEvent;
const causes = (id: string, context: OomContext = {}): Cause[] => explainOom(event(id), context);
const ids = (id: string): string[] => causes(id).map((c) => c.id);
const cause = (id: string, causeId: string): Cause => {
  const c = causes(id).find((x) => x.id === causeId);
  if (!c) throw new Error(`${causeId} did not fire on ${id}: ${ids(id).join(',')}`);
  return c;
};

/** Each framework rule: the message it fires on, and one of another family it must not fire on. */
const RULES: Array<[string, string, string]> = [
  ['cupy-pool', 'cupy-002', 'paddle-001'],
  ['paddle-allocation', 'paddle-001', 'cupy-002'],
  ['llama-cpp-buffer', 'ggml-001', 'vllm-003'],
  ['vllm-kv-cache', 'vllm-003', 'ggml-001'],
  ['vllm-no-cache-memory', 'vllm-005', 'vllm-001'],
  ['onnxruntime-arena', 'ort-001', 'trt-001'],
  ['tensorrt-memory', 'trt-003', 'ort-001'],
  ['mxnet-pool', 'mxnet-001', 'numba-001'],
  ['numba-driver', 'numba-001', 'mxnet-001'],
  ['deepspeed-workspace', 'deepspeed-001', 'cupy-001'],
];

describe('framework causes', () => {
  for (const [rule, positive, negative] of RULES) {
    it(`${rule}: fires on ${positive}, not on ${negative}`, () => {
      expect(ids(positive)[0]).toBe(rule);
      expect(ids(negative)).not.toContain(rule);
    });
  }

  it('CuPy: the pool and the request in the sentence; a set limit that is crossed ranks as the limit', () => {
    expect(cause('cupy-002', 'cupy-pool').detail).toContain('3.39 GiB already in its pool');
    const [limited] = parseOomText('cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,024 bytes (allocated so far: 2,048 bytes, limit set to: 2,560 bytes).');
    const c = explainOom(limited as OomEvent)[0] as Cause;
    expect([c.id, c.evidence.limitBytes]).toEqual(['cupy-pool-limit', 2560n]);
    expect(c.fix).toContain('3.00 KiB');
  });

  it('llama.cpp: the fix matches the buffer that failed', () => {
    expect(cause('ggml-001', 'llama-cpp-buffer').fix).toMatch(/-ngl/);
    expect(cause('ggml-002', 'llama-cpp-buffer').fix).toMatch(/-ub 256/);
    expect(cause('ggml-007', 'llama-cpp-buffer').fix).toMatch(/-ngl.*-c.*-ub/s);
    expect(cause('ggml-005', 'llama-cpp-buffer').detail).toMatch(/recommendedMaxWorkingSetSize/);
  });

  it('vLLM: max_model_len to set, from the cache (v0) or vLLM\'s estimate (v1), and the shortfall', () => {
    expect(cause('vllm-001', 'vllm-kv-cache').fix).toMatch(/^Set --max-model-len 3664 /);
    const v1 = cause('vllm-003', 'vllm-kv-cache');
    expect(v1.fix).toMatch(/^Set --max-model-len 34736 /);
    expect(v1.evidence.shortfallBytes).toBe(25769803776n - 3414499000n);
    expect(v1.fix).toMatch(/gpu-memory-utilization.*tensor-parallel-size.*quantization.*kv-cache-dtype/s);
  });

  it('ONNX Runtime: a size no device has is called corrupt, not an arena setting', () => {
    expect(ids('ort-003')[0]).toBe('corrupt-size');
    expect(ids('ort-003')).not.toContain('onnxruntime-arena');
  });

  it('TensorRT: a skipped tactic ranks below a failed build', () => {
    expect(cause('trt-001', 'tensorrt-memory').score).toBeLessThan(cause('trt-003', 'tensorrt-memory').score);
    expect(cause('trt-001', 'tensorrt-memory').evidence.tacticSkipped).toBe(true);
  });

  it('DeepSpeed: the workspace numbers, and no training advice', () => {
    const c = cause('deepspeed-001', 'deepspeed-workspace');
    expect(c.evidence).toEqual({ requestedBytes: 104873984n, freeBytes: 49217536n, totalBytes: 4294443008n });
    expect(ids('deepspeed-001')).not.toContain('footprint-too-large');
  });
});

describe('fragmentation first when free plus cached covers the request', () => {
  it('v2 message whose free + reserved-unallocated covers the request: fragmentation first (that PyTorch predates expandable segments: upgrade)', () => {
    const list = causes('old-v2-001');
    expect(list[0]?.id).toBe('fragmentation');
    expect(list[0]?.evidence.freePlusUnallocatedCovers).toBe(true);
    expect(list[0]?.fix).toMatch(/predates expandable segments.*expandable_segments:True/);
  });

  it('above other processes and a full device', () => {
    const [e] = parseOomText('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.50 GiB is free. Process 77 has 8.00 GiB memory in use. Including non-PyTorch memory, this process has 14.00 GiB memory in use. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)');
    const list = explainOom(e as OomEvent);
    expect(list[0]?.id).toBe('fragmentation');
    expect(list[0]?.fix).toMatch(/^Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True/);
    expect(list.map((c) => c.id)).toContain('other-processes');
  });

  it('not first when free + cached is short of the request, nor when a memory fraction caps growth, nor when expandable segments are on', () => {
    const short = parseOomText('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.50 GiB is free. Of the allocated memory 20.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.')[0] as OomEvent;
    expect(explainOom(short).map((c) => c.id)).not.toContain('fragmentation');
    const capped = parseOomText('RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.64 GiB total capacity; 10.00 GiB already allocated; 5.00 GiB free; 11.00 GiB allowed; 11.00 GiB reserved in total by PyTorch)')[0] as OomEvent;
    expect(explainOom(capped)[0]?.id).toBe('fraction-limit');
    const on = explainOom(event('old-v2-001'), { allocConf: 'expandable_segments:True' }).find((c) => c.id === 'fragmentation');
    expect(on?.score).toBeLessThan(80);
  });
});

describe('cut messages and hidden pids', () => {
  it('a piece says which deciding numbers are missing; a whole message gets no such note', () => {
    const [tail] = parseOomText('… 4.74 GiB reserved in total by PyTorch)');
    const note = explainOom(tail as OomEvent).find((c) => c.id === 'partial-message');
    expect(note?.detail).toMatch(/the request .*free memory.*total/);
    expect(ids('old-v2-001')).not.toContain('partial-message');
  });

  it('the hint alone: its own fix first in the note', () => {
    const [hint] = parseOomText('If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.');
    expect(explainOom(hint as OomEvent)[0]?.fix).toMatch(/^Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True/);
  });

  it('other processes without pids: sizes listed, no kill of a pid that was not printed', () => {
    const [e] = parseOomText('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 100.00 MiB is free. Process has 9.00 GiB memory in use. Process has 5.00 GiB memory in use. Including non-PyTorch memory, this process has 9.00 GiB memory in use. Of the allocated memory 8.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.');
    expect(e?.otherProcesses).toEqual([{ pid: null, bytes: 9n << 30n }, { pid: null, bytes: 5n << 30n }]);
    const c = explainOom(e as OomEvent).find((x) => x.id === 'other-processes') as Cause;
    expect(c.detail).toContain('pid not shown: 9.00 GiB');
    expect(c.fix).not.toMatch(/gpumem kill \d|gpumem kill null/);
  });
});
