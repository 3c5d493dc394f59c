/**
 * The public corpus of real OOM messages (reference §A.9): every expected field must match exactly.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

interface CorpusEntry {
  id: string;
  framework: string;
  format_variant: string;
  text: string;
  expected: {
    requested_bytes: number | string | null;
    gpu_index: number | null;
    total_bytes: number | string | null;
    free_bytes: number | string | null;
    process_in_use_bytes: number | string | null;
    allocated_by_pytorch_bytes: number | string | null;
    reserved_unallocated_bytes: number | string | null;
    other_processes: Array<{ pid: number; bytes: number | string | null }>;
  };
  extra: Record<string, unknown>;
}

const corpus = JSON.parse(readFileSync(new URL('../../fixtures/oom/corpus-public.json', import.meta.url), 'utf8')) as CorpusEntry[];
const big = (v: number | string | null | undefined): bigint | null => (v === null || v === undefined ? null : BigInt(v));

const FAMILY_BY_VARIANT: Array<[RegExp, string]> = [
  [/^pt-mps/, 'pytorch-mps'],
  [/hip/, 'pytorch-hip'],
  [/cudamallocasync/, 'pytorch-cuda-async'],
  [/^pt-/, 'pytorch-cuda'],
  [/cublas/, 'cublas'],
  [/cuda-error/, 'cuda-runtime'],
  [/nccl/, 'nccl'],
  [/^tf-/, 'tensorflow'],
  [/^xla/, 'xla'],
];

describe('public OOM corpus', () => {
  it('has the 27 messages', () => expect(corpus.length).toBe(27));

  for (const entry of corpus) {
    it(`${entry.id} (${entry.format_variant})`, () => {
      const events = parseOomText(entry.text);
      expect(events).toHaveLength(1);
      const e = events[0] as OomEvent;
      const x = entry.expected;
      expect({
        requested: e.requestedBytes,
        gpu: e.gpuIndex,
        total: e.totalBytes,
        free: e.freeBytes,
        process: e.processInUseBytes,
        allocated: e.allocatedByPytorchBytes,
        unallocated: e.reservedUnallocatedBytes,
        others: e.otherProcesses,
      }).toEqual({
        requested: big(x.requested_bytes),
        gpu: x.gpu_index,
        total: big(x.total_bytes),
        free: big(x.free_bytes),
        process: big(x.process_in_use_bytes),
        allocated: big(x.allocated_by_pytorch_bytes),
        unallocated: big(x.reserved_unallocated_bytes),
        others: x.other_processes.map((p) => ({ pid: p.pid, bytes: big(p.bytes) })),
      });
      const family = FAMILY_BY_VARIANT.find(([re]) => re.test(entry.format_variant))?.[1];
      expect(e.family).toBe(family);
      const extra = entry.extra;
      if ('reserved_total_bytes' in extra) expect(e.reservedTotalBytes).toBe(big(extra.reserved_total_bytes as number));
      if ('allowed_bytes' in extra) expect(e.allowedBytes).toBe(big(extra.allowed_bytes as number));
      if ('private_pools_bytes' in extra) expect(e.privatePoolBytes).toBe(big(extra.private_pools_bytes as number));
      if ('mps_allocated_bytes' in extra) expect(e.mps?.mpsAllocatedBytes).toBe(big(extra.mps_allocated_bytes as number));
      if ('other_allocations_bytes' in extra) expect(e.mps?.otherAllocationsBytes).toBe(big(extra.other_allocations_bytes as number));
      if ('pool' in extra) expect(e.mps?.pool).toBe(extra.pool);
      if ('tensor_shape' in extra) expect(e.tensor?.shape).toEqual(extra.tensor_shape);
      if ('allowed_sentinel' in extra) {
        expect(e.allowedBytes).toBeNull();
        expect(e.unavailable.allowedBytes).toMatch(/SIZE_MAX/);
      }
    });
  }
});
