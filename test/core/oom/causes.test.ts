/**
 * Each cause rule fires on the evidence it names (positive) and stays silent without it (negative). Events
 * come from real message wording run through the parser, so the numbers are the parser's exact bytes.
 */
import { describe, expect, it } from 'vitest';
import { pct } from '../../../src/core/oom/causes/helpers.js';
import { explainOom, parseOomText, type Cause, type OomContext, type OomEvent } from '../../../src/core/oom/index.js';

function one(text: string): OomEvent {
  const events = parseOomText(text);
  expect(events).toHaveLength(1);
  return events[0] as OomEvent;
}
const ids = (event: OomEvent, ctx: OomContext = {}): string[] => explainOom(event, ctx).map((c) => c.id);
const cause = (event: OomEvent, id: string, ctx: OomContext = {}): Cause => {
  const found = explainOom(event, ctx).find((c) => c.id === id);
  expect(found, id).toBeDefined();
  return found as Cause;
};

const v5 = (req: string, total: string, free: string, procs: string, alloc: string, unalloc: string, extra = ''): string =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${req}. GPU 0 has a total capacity of ${total} of which ${free} is free. ${procs}${extra}Of the allocated memory ${alloc} is allocated by PyTorch, and ${unalloc} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`;

describe('cause rules', () => {
  it('request-exceeds-total: positive and negative', () => {
    const e = one('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 27.12 GiB. GPU 0 has a total capacty of 11.99 GiB of which 0 bytes is free. Of the allocated memory 16.16 GiB is allocated by PyTorch, and 144.59 MiB is reserved by PyTorch but unallocated.');
    const c = cause(e, 'request-exceeds-total');
    expect(c.evidence.requestedBytes).toBe(29119878267n);
    expect(c.fix).toMatch(/3×/);
    expect(ids(e)[0]).toBe('request-exceeds-total');
    expect(ids(e)).not.toContain('fragmentation');
    expect(ids(one(v5('2.00 MiB', '10.00 GiB', '1.00 MiB', '', '9.00 GiB', '10.00 MiB')))).not.toContain('request-exceeds-total');
  });

  it('fragmentation: fires when unallocated covers the request, not when small, not suggesting what is on', () => {
    const e = one(v5('1.70 GiB', '6.00 GiB', '0 bytes', '', '2.93 GiB', '2.30 GiB'));
    const c = cause(e, 'fragmentation');
    expect(c.evidence.reservedUnallocatedBytes).toBe(2469606195n);
    expect(c.fix).toContain('PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True');
    const on = cause(e, 'fragmentation', { allocConf: 'expandable_segments:True' });
    expect(on.fix).not.toMatch(/^Set /);
    expect(on.fix).toMatch(/already on/);
    expect(ids(one(v5('1.70 GiB', '6.00 GiB', '0 bytes', '', '5.00 GiB', '13.88 MiB')))).not.toContain('fragmentation');
  });

  it('fragmentation from v2 derives the amount and says so', () => {
    const e = one('RuntimeError: CUDA out of memory. Tried to allocate 1.78 GiB (GPU 0; 4.00 GiB total capacity; 1.42 GiB already allocated; 0 bytes free; 3.23 GiB reserved in total by PyTorch)');
    const c = cause(e, 'fragmentation');
    expect(c.evidence.derived).toBe(true);
    expect(c.evidence.reservedUnallocatedBytes).toBe(e.reservedTotalBytes! - e.allocatedByPytorchBytes!);
    expect(c.fix).toMatch(/max_split_size_mb|expandable/);
  });

  it('other-processes lists pids with live cross-check; negative without processes', () => {
    const e = one(v5('2.00 GiB', '24.00 GiB', '100.00 MiB', 'Process 4242 has 10.00 GiB memory in use. Including non-PyTorch memory, this process has 13.00 GiB memory in use. ', '12.00 GiB', '100.00 MiB'));
    const c = cause(e, 'other-processes', { liveChecked: true, liveProcesses: [{ pid: 4242, usedBytes: 10 * 2 ** 30, user: 'alice', state: 'S', cmdline: ['python', 'old.py'] }] });
    expect(c.evidence.otherProcessesBytes).toBe(10n * 2n ** 30n);
    expect(c.detail).toMatch(/4242: 10\.00 GiB \(still running, user alice, python old\.py/);
    expect(c.fix).toContain('gpumem kill 4242');
    expect(cause(e, 'other-processes', { liveChecked: true, liveProcesses: [] }).detail).toMatch(/no longer on the GPU/);
    expect(ids(one(v5('2.00 GiB', '24.00 GiB', '100.00 MiB', '', '20.00 GiB', '100.00 MiB')))).not.toContain('other-processes');
  });

  it('container-self: one Process line and no "this process" line', () => {
    const e = one(v5('2.00 GiB', '79.25 GiB', '100.00 MiB', 'Process 2752205 has 77.00 GiB memory in use. ', '75.00 GiB', '1.00 GiB'));
    expect(ids(e)).toContain('container-self');
    expect(ids(e)).not.toContain('other-processes');
  });

  it('stray-contexts: equal small processes; negative when sizes differ', () => {
    const procs = [1, 2, 3, 4].map((i) => `Process ${1000 + i} has 1.19 GiB memory in use. `).join('');
    expect(cause(one(v5('2.00 MiB', '24.00 GiB', '0 bytes', procs, '18.00 GiB', '10.00 MiB')), 'stray-contexts').evidence.processes).toBe(4);
    const mixed = 'Process 1 has 1.19 GiB memory in use. Process 2 has 5.00 GiB memory in use. ';
    expect(ids(one(v5('2.00 MiB', '24.00 GiB', '0 bytes', mixed, '18.00 GiB', '10.00 MiB')))).not.toContain('stray-contexts');
  });

  it('non-pytorch-memory: positive when > 1 GiB, negative for 0 bytes (vGPU)', () => {
    const e = one(v5('1.00 GiB', '40.00 GiB', '10.00 MiB', 'Including non-PyTorch memory, this process has 39.00 GiB memory in use. ', '30.00 GiB', '1.00 GiB'));
    expect(cause(e, 'non-pytorch-memory').evidence.nonPytorchBytes).toBe(8n * 2n ** 30n);
    const zero = one(v5('1.00 GiB', '40.00 GiB', '10.00 MiB', 'Including non-PyTorch memory, this process has 0 bytes memory in use. ', '30.00 GiB', '1.00 GiB'));
    expect(ids(zero)).not.toContain('non-pytorch-memory');
  });

  it('private-pools: positive when large, negative when absent', () => {
    const text = v5('1.00 GiB', '40.00 GiB', '10.00 MiB', '', '30.00 GiB', '20.00 MiB').replace('is allocated by PyTorch, and', 'is allocated by PyTorch, with 6.00 GiB allocated in private pools (e.g., CUDA Graphs), and');
    const e = one(text);
    expect(e.privatePoolBytes).toBe(6n * 2n ** 30n);
    expect(e.era?.version).toBe('≥2.4');
    expect(cause(e, 'private-pools').evidence.privatePoolBytes).toBe(6n * 2n ** 30n);
    expect(ids(one(v5('1.00 GiB', '40.00 GiB', '10.00 MiB', '', '30.00 GiB', '20.00 MiB')))).not.toContain('private-pools');
  });

  it('small-request-full-device quantifies the shortfall; negative when free covers it', () => {
    const e = one(v5('20.00 MiB', '14.76 GiB', '14.75 MiB', '', '13.90 GiB', '10.00 MiB'));
    const c = cause(e, 'small-request-full-device');
    expect(c.evidence.shortfallBytes).toBe(20n * 2n ** 20n - e.freeBytes!);
    expect(c.fix).toMatch(/halve the batch size and double gradient accumulation/);
    expect(ids(one(v5('20.00 MiB', '14.76 GiB', '1.00 GiB', '', '13.00 GiB', '10.00 MiB')))).not.toContain('small-request-full-device');
  });

  it('fraction-limit: the allowed cap was hit; negative when under it', () => {
    const e = one(v5('1.00 GiB', '16.00 GiB', '8.00 GiB', '', '7.50 GiB', '0 bytes', '8.00 GiB allowed; '));
    expect(e.allowedBytes).toBe(8n * 2n ** 30n);
    const c = cause(e, 'fraction-limit');
    expect(c.fix).toMatch(/at least 0\.54/);
    expect(ids(one(v5('1.00 GiB', '16.00 GiB', '8.00 GiB', '', '2.00 GiB', '0 bytes', '8.00 GiB allowed; ')))).not.toContain('fraction-limit');
  });

  it('wsl-sentinel and wddm-fallback; negative on ordinary numbers', () => {
    const wsl = one(v5('2.00 GiB', '8.00 GiB', '0 bytes', 'Including non-PyTorch memory, this process has 17179869184.00 GiB memory in use. ', '6.00 GiB', '10.00 MiB'));
    expect(wsl.processInUseBytes).toBeNull();
    expect(ids(wsl)).toContain('wsl-sentinel');
    const wddm = one('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.73 GiB (GPU 0; 8.00 GiB total capacity; 17.20 GiB already allocated; 0 bytes free; 19.15 GiB reserved in total by PyTorch)');
    expect(ids(wddm)).toContain('wddm-fallback');
    expect(ids(one(v5('2.00 GiB', '8.00 GiB', '0 bytes', '', '6.00 GiB', '10.00 MiB')))).not.toContain('wsl-sentinel');
  });

  it('device-remap: needs CUDA_VISIBLE_DEVICES that changes the index', () => {
    const e = one(v5('2.00 GiB', '8.00 GiB', '0 bytes', '', '6.00 GiB', '10.00 MiB'));
    expect(cause(e, 'device-remap', { cudaVisibleDevices: '4,5' }).evidence.physicalGpu).toBe('4');
    expect(ids(e, { cudaVisibleDevices: '0,1' })).not.toContain('device-remap');
    expect(ids(e)).not.toContain('device-remap');
  });

  it('outside-allocator for runtime/cuBLAS/NCCL; not for the caching allocator', () => {
    expect(ids(one('RuntimeError: CUDA error: out of memory'))).toContain('outside-allocator');
    expect(cause(one("host:1:2 [3] NCCL WARN Failed to CUDA calloc 6291456 bytes"), 'outside-allocator').detail).toMatch(/6\.00 MiB/);
    expect(ids(one(v5('2.00 GiB', '8.00 GiB', '0 bytes', '', '6.00 GiB', '10.00 MiB')))).not.toContain('outside-allocator');
  });

  it('mps: other allocations dominate; limit case otherwise', () => {
    const e = one('MPS backend out of memory (MPS allocated: 7.43 GB, other allocations: 24.46 GB, max allowed: 32.00 GB). Tried to allocate 129.21 MB on private pool.');
    expect(ids(e)).toContain('mps-other-allocations');
    const own = one('MPS backend out of memory (MPS allocated: 24.46 GB, other allocations: 1.00 GB, max allowed: 26.00 GB). Tried to allocate 600.00 MB on private pool.');
    expect(ids(own)).not.toContain('mps-other-allocations');
    expect(ids(own)).toContain('mps-limit');
  });

  it('tensorflow computes bytes from shape × dtype; xla keeps exact bytes', () => {
    const tf = one('OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc');
    expect(tf.requestedBytes).toBeNull();
    expect(tf.tensor?.bytes).toBe(16n * 112n * 112n * 147n * 4n);
    expect(cause(tf, 'tensorflow-allocation').evidence.derivedFromShape).toBe(true);
    expect(cause(one('RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.'), 'xla-allocation').evidence.requestedBytes).toBe(14285187448n);
    expect(ids(one('RuntimeError: CUDA error: out of memory'))).not.toContain('xla-allocation');
  });

  it('corrupt-size for more than 1EB', () => {
    const e = one('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.');
    expect(e.requestMoreThan1EB).toBe(true);
    expect(ids(e)).toEqual(['corrupt-size']);
  });

  it('every cause carries a number in its detail or fix', () => {
    const e = one(v5('2.00 GiB', '24.00 GiB', '100.00 MiB', 'Process 4242 has 10.00 GiB memory in use. ', '12.00 GiB', '3.00 GiB'));
    for (const c of explainOom(e)) expect(`${c.detail} ${c.fix}`).toMatch(/\d/);
  });
});

describe('pct (percentages in cause sentences)', () => {
  it('rounds to whole percent, stays exact beyond 2^53 bytes, and says n/a for a zero whole', () => {
    expect(pct(1n, 3n)).toBe('33%');
    expect(pct(2n, 3n)).toBe('67%');
    expect(pct(1n << 60n, 1n << 61n)).toBe('50%');
    expect(pct((1n << 60n) + 1n, 1n << 60n)).toBe('100%');
    expect(pct(5n, 0n)).toBe('n/a');
  });
});
