import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { diagnose, RULES } from '../../../src/core/diagnose/index.js';
import { check, device, GiB, input, MiB, proc, sample, windowOf } from './build.js';

describe('stale-pids and hidden-processes', () => {
  const s = sample(0, [device(0, 5 * GiB)], [proc(70, 0, 5 * GiB, { visible: false })]);
  it('a missing pid is stale when gpumem sees the host pid namespace', () => {
    expect(check('stale-pids', input([s], { pidNamespace: 'host' }))[0]).toMatchObject({ evidence: { pids: [70], bytes: 5 * GiB } });
    expect(check('hidden-processes', input([s], { pidNamespace: 'host' }))).toEqual([]);
  });
  it('a pid visible earlier in the window and gone now is stale in any namespace', () => {
    const earlier = sample(-1000, [device(0, 5 * GiB)], [proc(70, 0, 5 * GiB)]);
    expect(check('stale-pids', input([earlier, s], { pidNamespace: 'container' }))).toHaveLength(1);
  });
  it('inside a container a missing pid is hidden, not stale, and the fix says --pid=host', () => {
    expect(check('stale-pids', input([s], { pidNamespace: 'container' }))).toEqual([]);
    const [f] = check('hidden-processes', input([s], { pidNamespace: 'container' }));
    expect(f).toMatchObject({ severity: 'info', evidence: { pids: [70], bytes: 5 * GiB } });
    expect(f!.fix).toMatch(/--pid=host/);
  });
  it('both stay quiet when every pid is visible', () => {
    const ok = sample(0, [device(0, 5 * GiB)], [proc(70, 0, 5 * GiB)]);
    expect([...check('stale-pids', input([ok], { pidNamespace: 'host' })), ...check('hidden-processes', input([ok]))]).toEqual([]);
  });
});

describe('unattributed', () => {
  it('fires when no process accounts for 256 MiB or more, with the exact residual', () => {
    const s = sample(0, [device(0, 10 * GiB + 300 * MiB)], [proc(10, 0, 10 * GiB)]);
    expect(check('unattributed', input([s]))[0]).toMatchObject({ evidence: { bytes: 300 * MiB, gpuIndexes: [0] } });
  });
  it('stays quiet below the threshold (driver bookkeeping)', () => {
    const s = sample(0, [device(0, 10 * GiB + 20 * MiB)], [proc(10, 0, 10 * GiB)]);
    expect(check('unattributed', input([s]))).toEqual([]);
  });
});

describe('wrong-gpu and device-order', () => {
  it('fires when memory sits on a GPU outside CUDA_VISIBLE_DEVICES', () => {
    const s = sample(0, [device(0, 8 * GiB), device(1, 0), device(2, 0)], [proc(80, 0, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: '2' } })]);
    const [f] = check('wrong-gpu', input([s]));
    expect(f).toMatchObject({ evidence: { pids: [80], gpuIndexes: [0], bytes: 8 * GiB, details: { allowed: [2] } } });
  });
  it('matches UUID entries and stays quiet on the right GPU', () => {
    const d = [device(0, 0), device(1, 8 * GiB)];
    const s = sample(0, d, [proc(80, 1, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: d[1]!.uuid!.slice(0, 12) } })]);
    expect(check('wrong-gpu', input([s]))).toEqual([]);
  });
  const mixed = [device(0, 8 * GiB), device(1, 0, { name: 'NVIDIA RTX A5000' })];
  it('device-order fires for numeric CUDA_VISIBLE_DEVICES on mixed models without PCI_BUS_ID', () => {
    const s = sample(0, mixed, [proc(80, 0, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: '1' } })]);
    expect(check('device-order', input([s]))[0]).toMatchObject({ evidence: { pids: [80] } });
    expect(check('wrong-gpu', input([s]))).toEqual([]); // cannot know which GPU "1" meant
  });
  it('device-order stays quiet with CUDA_DEVICE_ORDER=PCI_BUS_ID or one model', () => {
    const pci = sample(0, mixed, [proc(80, 0, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: '0', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' } })]);
    const same = sample(0, [device(0, 8 * GiB), device(1, 0)], [proc(80, 0, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: '0' } })]);
    expect([...check('device-order', input([pci])), ...check('device-order', input([same]))]).toEqual([]);
  });
});

describe('low-utilization', () => {
  const make = (utilPct: number) => windowOf(6, () => ({ devices: [device(0, 40 * GiB, { utilPct })], processes: [proc(90, 0, 40 * GiB)] }));
  it('fires for a GPU with much memory and ≤ 10% mean utilization', () => {
    const [f] = check('low-utilization', input(make(3)));
    expect(f).toMatchObject({ evidence: { pids: [90], bytes: 40 * GiB, details: { meanUtilPct: 3, samples: 6, windowMs: 2500 } } });
  });
  it('stays quiet for a busy GPU, and for a single sample', () => {
    expect(check('low-utilization', input(make(80)))).toEqual([]);
    expect(check('low-utilization', input(make(3).slice(0, 1)))).toEqual([]);
  });
  it('fires on utilization whatever the memory: 573 MiB of 8 GiB at 12 % says a larger batch fits, with the free bytes', () => {
    const total = 8 * GiB;
    const used = 573 * MiB;
    const small = windowOf(6, () => ({
      devices: [device(0, used, { utilPct: 12, memory: { totalBytes: total, reservedBytes: 0, usedBytes: used, freeBytes: total - used } })],
      processes: [proc(91, 0, used, { smUtilPct: 12 })],
    }));
    const [f] = check('low-utilization', input(small));
    expect(f?.title).toBe('GPU 0 is under-used: 12% mean utilization with 573.00 MiB used (7% of 8.00 GiB)');
    expect(f?.evidence.details).toMatchObject({ meanUtilPct: 12, largerBatchFits: true, freeBytes: total - used });
    expect(f?.fix).toContain('a larger batch fits: 7.44 GiB is free');
    expect(f?.fix).toContain('num_workers');
  });
  it('with most memory used it names the input pipeline, not a larger batch; at 26 % it stays quiet', () => {
    expect(check('low-utilization', input(make(3)))[0]?.fix).not.toContain('larger batch');
    expect(check('low-utilization', input(make(25)))).toHaveLength(1);
    expect(check('low-utilization', input(make(26)))).toEqual([]);
  });
});

describe('alloc-conf', () => {
  it('fires for a Python process with readable env and no allocator config', () => {
    const s = sample(0, [device(0, 8 * GiB)], [proc(95, 0, 8 * GiB, { env: { CUDA_VISIBLE_DEVICES: '0' } })]);
    expect(check('alloc-conf', input([s]))[0]).toMatchObject({ severity: 'info', evidence: { pids: [95] } });
  });
  it('stays quiet when set, or when the environment could not be read', () => {
    const set = sample(0, [device(0, 8 * GiB)], [proc(95, 0, 8 * GiB, { env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' } })]);
    const unreadable = sample(0, [device(0, 8 * GiB)], [proc(95, 0, 8 * GiB, { env: null })]);
    expect([...check('alloc-conf', input([set])), ...check('alloc-conf', input([unreadable]))]).toEqual([]);
  });
});

describe('near-capacity', () => {
  const usedFull = 81559 * MiB - 479 * MiB - 2 * GiB;
  it('fires critical with the headroom in bytes when an active job nearly fills the GPU', () => {
    const s = windowOf(2, () => ({ devices: [device(0, usedFull, { utilPct: 95 })], processes: [proc(99, 0, usedFull, { smUtilPct: 90 })] }));
    const [f] = check('near-capacity', input(s));
    expect(f).toMatchObject({ severity: 'critical', evidence: { bytes: 2 * GiB, pids: [99] } });
    expect(f!.title).toContain('2.00 GiB headroom');
  });
  it('stays quiet when the full GPU is idle, or when there is room', () => {
    const idle = windowOf(2, () => ({ devices: [device(0, usedFull, { utilPct: 0 })], processes: [proc(99, 0, usedFull, { smUtilPct: 0 })] }));
    const roomy = windowOf(2, () => ({ devices: [device(0, 40 * GiB, { utilPct: 95 })], processes: [proc(99, 0, 40 * GiB, { smUtilPct: 90 })] }));
    expect([...check('near-capacity', input(idle)), ...check('near-capacity', input(roomy))]).toEqual([]);
  });
});

describe('engine', () => {
  it('orders findings by severity and finds nothing on a healthy GPU', () => {
    const healthy = windowOf(3, () => ({
      devices: [device(0, 30 * GiB + 10 * MiB, { utilPct: 90 })],
      processes: [proc(10, 0, 30 * GiB, { smUtilPct: 90, env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' } })],
    }));
    expect(diagnose(input(healthy)).findings).toEqual([]);
    const s = windowOf(2, () => ({
      devices: [device(0, 79 * GiB, { utilPct: 95 })],
      processes: [proc(10, 0, 78 * GiB, { smUtilPct: 90, env: {} }), proc(11, 0, 500 * MiB, { ppid: 10, smUtilPct: 0 })],
    }));
    const severities = diagnose(input(s)).findings.map((f) => f.severity);
    expect(severities[0]).toBe('critical');
    expect([...severities].sort((a, b) => ['critical', 'warning', 'info'].indexOf(a) - ['critical', 'warning', 'info'].indexOf(b))).toEqual(severities);
  });
  it('refuses an empty window with one clear error', () => {
    expect(() => diagnose(input([]))).toThrow(/no samples/);
  });
  it('every rule has a test that names it', () => {
    const tests = ['rules-a.test.ts', 'rules-b.test.ts', 'rules-pytorch.test.ts'].map((f) => readFileSync(new URL(f, import.meta.url), 'utf8')).join('\n');
    for (const rule of RULES) expect(tests, rule.id).toContain(`'${rule.id}'`);
  });
  it('docs/diagnose.md documents every rule', () => {
    const docs = readFileSync(new URL('../../../docs/diagnose.md', import.meta.url), 'utf8');
    for (const rule of RULES) expect(docs, rule.id).toContain(`| \`${rule.id}\` |`);
  });
});
