/**
 * Real out-of-memory messages of other frameworks (test/fixtures/oom/corpus-frameworks.json, each with the
 * issue it was taken from): family, framework and every number exactly, also through the byte scanner.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createOomByteScanner, createOomScanner, oomEventToJson, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

interface Entry {
  id: string;
  source_url: string;
  framework: string;
  family: string;
  text: string;
  expected: {
    requested_bytes?: number | string;
    gpu_index?: number;
    free_bytes?: number;
    total_bytes?: number;
    pool_bytes?: number;
    backend?: string;
    partial: boolean;
    kv_cache?: Record<string, number | null>;
  };
}

const corpus = JSON.parse(readFileSync(new URL('../../fixtures/oom/corpus-frameworks.json', import.meta.url), 'utf8')) as Entry[];
const big = (v: number | string | undefined): bigint | null => (v === undefined ? null : BigInt(v));

describe('other frameworks: real messages', () => {
  it('covers every family asked for, each from a public issue', () => {
    const families = new Set(corpus.map((e) => e.family));
    for (const f of ['cupy', 'paddle', 'ggml-cuda', 'ggml-metal', 'ggml-vulkan', 'vllm-kv-cache', 'xla', 'onnxruntime', 'tensorrt', 'mxnet', 'numba', 'deepspeed']) {
      expect(families.has(f), f).toBe(true);
    }
    for (const e of corpus) expect(e.source_url).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull)\/\d+$/);
  });

  for (const entry of corpus) {
    it(`${entry.id} (${entry.family})`, () => {
      const events = parseOomText(entry.text);
      expect(events).toHaveLength(1);
      const e = events[0] as OomEvent;
      const x = entry.expected;
      expect({ family: e.family, framework: e.framework }).toEqual({ family: entry.family, framework: entry.framework });
      expect({
        requested: e.requestedBytes,
        gpu: e.gpuIndex,
        free: e.freeBytes,
        total: e.totalBytes,
        pool: e.poolBytes,
        backend: e.backend,
        partial: e.partial,
      }).toEqual({
        requested: big(x.requested_bytes),
        gpu: x.gpu_index ?? null,
        free: big(x.free_bytes),
        total: big(x.total_bytes),
        pool: big(x.pool_bytes),
        backend: x.backend ?? null,
        partial: x.partial,
      });
      if (x.kv_cache) {
        const kv = e.kvCache as unknown as Record<string, bigint | number | null>;
        for (const [k, v] of Object.entries(x.kv_cache)) expect(kv[k], k).toEqual(typeof kv[k] === 'bigint' ? BigInt(v as number) : v);
      }
    });
  }

  it('the byte scanner gives the same events as the text scanner for the whole corpus in one log', () => {
    const log = corpus.map((e) => `step ${e.id}\n${e.text}\n${'x\n'.repeat(3)}`).join('');
    const scanner = createOomByteScanner({ dedupWindowLines: 2 });
    const bytes = Buffer.from(log, 'utf8');
    const got = [...scanner.push(bytes.subarray(0, 777)), ...scanner.push(bytes.subarray(777)), ...scanner.end()];
    const json = (events: OomEvent[]): string => JSON.stringify(events.map((ev) => oomEventToJson(ev, [])));
    const textScanner = createOomScanner({ dedupWindowLines: 2 });
    const text = [...textScanner.push(log), ...textScanner.end()];
    expect(got.length).toBe(corpus.length);
    expect(json(got)).toBe(json(text));
  });

  it('a size above 2^53 stays exact: bigint inside, a decimal string in JSON', () => {
    const e = parseOomText((corpus.find((c) => c.id === 'ort-003') as Entry).text)[0] as OomEvent;
    expect(e.requestedBytes).toBe(4585490524328388608n);
    expect(oomEventToJson(e, []).requestedBytes).toBe('4585490524328388608');
  });

  it('a llama.cpp CPU buffer is host memory, not a device OOM', () => {
    expect(parseOomText('alloc_tensor_range: failed to allocate CPU buffer of size 29045632')).toEqual([]);
  });

  it('a bare "cudaMalloc failed" without MXNet nearby is the CUDA runtime, not MXNet', () => {
    const [e] = parseOomText('cudaMalloc failed: out of memory');
    expect([e?.family, e?.framework]).toEqual(['cuda-runtime', 'pytorch']);
  });

  it('JAX\'s copy of the BFC allocator is told from TensorFlow\'s by its source path, with the exact rounded size', () => {
    const line = 'W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.45GiB (rounded to 1560281088)requested by op';
    const [e] = parseOomText(line);
    expect([e?.family, e?.requestedBytes, e?.gpuIndex]).toEqual(['xla', 1560281088n, 0]);
    const [tf] = parseOomText(line.replace('external/org_tensorflow/', ''));
    expect([tf?.family, tf?.requestedBytes]).toEqual(['tensorflow', 1560281088n]);
  });
});
