import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { superviseRun, type SuperviseOptions } from '../../src/supervise/index.js';
import { GiB, PROCS, alive, claimsSource, sink, tempDir } from './helpers/claims.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

function setup(gpus = 2, extra: { leakBytes?: number[] } = {}) {
  const tmp = tempDir('gpumem-run-');
  cleanups.push(tmp.remove);
  const source = claimsSource(tmp.dir, Array.from({ length: gpus }, () => ({ totalBytes: 80 * GiB })), extra);
  const out = sink();
  const err = sink();
  const lines: string[] = [];
  const base = (argv: string[], more: Partial<SuperviseOptions> = {}): SuperviseOptions => ({
    argv, source, env: { PATH: process.env.PATH, GPUMEM_TEST_CLAIMS: tmp.dir }, stdout: out, stderr: err,
    log: (l) => lines.push(l), intervalMs: 20, graceMs: 300, settleMs: 300, cleanupTimeoutMs: 2000, ...more,
  });
  return { tmp, source, out, err, lines, base };
}

const node = (script: string, ...args: string[]): string[] => [process.execPath, `${PROCS}/${script}`, ...args];

describe('superviseRun', () => {
  it('refuses a zero sampling interval, a negative grace or a fractional retry count before starting anything', async () => {
    const t = setup();
    const marker = `${t.tmp.dir}/started`;
    const argv = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`];
    for (const [more, flag] of [[{ intervalMs: 0 }, '--interval-ms'], [{ graceMs: -1 }, '--grace-ms'], [{ retryOom: 1.5 }, '--retry-oom']] as const) {
      await expect(superviseRun(t.base(argv, more))).rejects.toMatchObject({ code: 'BAD_OPTION_VALUE', message: expect.stringContaining(flag) });
    }
    await expect(superviseRun(t.base(argv, { intervalMs: 1, graceMs: 0 }))).resolves.toMatchObject({ exit: { code: 0, signal: null } });
    expect(existsSync(marker)).toBe(true);
  });

  it('pins the chosen GPU by UUID, merges the allocator config and passes output through unchanged', async () => {
    const t = setup();
    const opts = t.base(node('worker-tree.mjs', '--hold-ms', '50'), { gpus: '1' });
    opts.env = { ...opts.env, PYTORCH_CUDA_ALLOC_CONF: 'max_split_size_mb:128' };
    const report = await superviseRun(opts);
    expect(t.out.text()).toBe('started 0 workers; CUDA_VISIBLE_DEVICES=GPU-00000000-0000-4000-8000-000000000001\n');
    const byName = Object.fromEntries(report.env.map((d) => [d.name, d]));
    expect(byName.CUDA_DEVICE_ORDER?.value).toBe('PCI_BUS_ID');
    expect(byName.PYTORCH_CUDA_ALLOC_CONF).toMatchObject({ value: 'max_split_size_mb:128,expandable_segments:True', action: 'merged' });
    expect(t.lines.filter((l) => l.startsWith('env CUDA_VISIBLE_DEVICES=')).length).toBe(1);
    expect(report.exit).toEqual({ code: 0, signal: null });
    expect(report.attempts[0]?.outputTail).toBe(t.out.text());
  });

  it('measures the peak of the whole tree per GPU, workers included', async () => {
    const t = setup();
    const report = await superviseRun(t.base(node('worker-tree.mjs', '--workers', '3', '--claim', `0:${2 * GiB}`, '--worker-claim', `0:${GiB}`, '--hold-ms', '600'), { gpus: '0' }));
    expect(report.peaks).toHaveLength(1);
    expect(report.peaks[0]).toMatchObject({ index: 0, peakBytes: 5 * GiB, chosen: true });
    expect(report.attempts[0]?.samples).toBeGreaterThan(3);
    expect(report.attempts[0]?.mismatches).toEqual([]);
    expect(report.attempts[0]?.cleanup.leftovers).toEqual([]);
    expect(report.attempts[0]?.cleanup.memoryReleased).toBe(true);
  });

  it('reports memory on a GPU that was not chosen as a device mismatch, with the pid', async () => {
    const t = setup();
    const report = await superviseRun(t.base(node('worker-tree.mjs', '--workers', '1', '--claim', `0:${GiB}`, '--worker-claim', `1:${3 * GiB}`, '--hold-ms', '500'), { gpus: '0' }));
    const [m] = report.attempts[0]?.mismatches ?? [];
    expect(m).toMatchObject({ index: 1, usedBytes: 3 * GiB });
    expect(m?.pid).not.toBe(undefined);
    expect(t.lines.some((l) => l.includes('device mismatch') && l.includes('GPU 1'))).toBe(true);
    expect(report.peaks.find((p) => p.index === 1)).toMatchObject({ peakBytes: 3 * GiB, chosen: false });
  });

  it('propagates the exit code and the signal that killed the child', async () => {
    const t = setup();
    expect((await superviseRun(t.base(node('worker-tree.mjs', '--hold-ms', '10', '--exit', '7')))).exit).toEqual({ code: 7, signal: null });
    expect((await superviseRun(t.base(node('worker-tree.mjs', '--hold-ms', '10', '--crash', '1')))).exit).toEqual({ code: null, signal: 'SIGSEGV' });
  });

  it('forwards SIGINT to the child group and reports what the child did with it', async () => {
    const t = setup();
    const ac = new AbortController();
    const running = superviseRun(t.base(node('worker-tree.mjs', '--workers', '2', '--hold-ms', '20000', '--int-exit', '130'), { signal: ac.signal }));
    await waitFor(() => t.out.text().includes('started'));
    ac.abort('SIGINT');
    const report = await running;
    expect(t.out.text()).toContain('parent got SIGINT');
    expect(report.exit).toEqual({ code: 130, signal: null });
    expect(report.attempts[0]?.interruptedBy).toBe('SIGINT');
  });

  it('escalates to SIGKILL when the child ignores INT and TERM', async () => {
    const t = setup();
    const ac = new AbortController();
    const running = superviseRun(t.base(node('ignore-term.mjs'), { signal: ac.signal, graceMs: 200 }));
    await waitFor(() => t.out.text().includes('ready'));
    ac.abort('SIGINT');
    const report = await running;
    expect(t.out.text()).toContain('ignored SIGINT');
    expect(t.out.text()).toContain('ignored SIGTERM');
    expect(report.exit).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('lists and ends leftover workers, KILLing the ones that ignore TERM, and verifies memory is released', async () => {
    for (const mode of ['orphan', 'stubborn'] as const) {
      const t = setup();
      const report = await superviseRun(t.base(node('worker-tree.mjs', '--workers', '2', '--worker-mode', mode, '--worker-claim', `0:${GiB}`, '--hold-ms', '300')));
      const { leftovers, memoryReleased } = report.attempts[0]!.cleanup;
      expect(leftovers).toHaveLength(2);
      for (const l of leftovers) {
        expect(l.outcome).toBe(mode === 'orphan' ? 'terminated' : 'killed');
        expect(l.gpuBytes).toBe(GiB);
        expect(alive(l.pid)).toBe(false);
      }
      expect(memoryReleased).toBe(true);
    }
  });

  it('reports memory held by no process after the run', async () => {
    const leak = { leakBytes: [0, 0] };
    const t = setup(2, leak);
    const report = await superviseRun(t.base(node('worker-tree.mjs', '--hold-ms', '50'), {
      gpus: '0', toleranceBytes: 64 * 1024 * 1024,
      plugins: [{ name: 'leaker', onSpawn: () => void (leak.leakBytes[0] = 2 * GiB) }],
    }));
    expect(report.attempts[0]?.cleanup.heldByNothing).toEqual([expect.objectContaining({ index: 0, bytes: 2 * GiB })]);
  });

  it('retries an OOM with half the batch and double the accumulation until it fits', async () => {
    const t = setup();
    const report = await superviseRun(t.base(node('oom-at.mjs', '--batch', '{batch}', '--accum', '{accum}', '--threshold', '4', '--hold-ms', '50'), { batch: 16, retryOom: 3 }));
    expect(report.attempts.map((a) => a.batch)).toEqual([{ batch: 16, accum: 1 }, { batch: 8, accum: 2 }, { batch: 4, accum: 4 }]);
    expect(report.attempts.map((a) => a.exit.code)).toEqual([1, 1, 0]);
    expect(report.attempts[0]?.ooms).toHaveLength(1);
    const oom = report.attempts[0]!.ooms[0]!;
    expect(oom.text).toMatch(/^CUDA out of memory\. Tried to allocate 4096\.00 MiB/);
    expect(oom.event).toMatchObject({ exceptionClass: 'torch.OutOfMemoryError', requestedBytes: BigInt(4 * GiB), gpuIndex: 0 });
    expect(oom.causes.length).toBeGreaterThan(0);
    expect(report.retries).toBe(2);
    expect(t.out.text()).toContain('batch=8 accum=2 env_batch=8');
  });

  it('stops retrying at batch 1 and when retries run out', async () => {
    const t = setup();
    const one = await superviseRun(t.base(node('oom-at.mjs', '--batch', '{batch}', '--threshold', '0', '--hold-ms', '10'), { batch: 2, retryOom: 5 }));
    expect(one.attempts.map((a) => a.batch?.batch)).toEqual([2, 1]);
    expect(one.retryNote).toMatch(/batch 1/);
    expect(one.exit.code).toBe(1);
    const capped = await superviseRun(t.base(node('oom-at.mjs', '--batch', '{batch}', '--threshold', '1', '--hold-ms', '10'), { batch: 64, retryOom: 2 }));
    expect(capped.attempts.map((a) => a.batch?.batch)).toEqual([64, 32, 16]);
    expect(capped.retryNote).toMatch(/gave up after 2/);
  });

  it('refuses an unknown GPU and unmet --require-free before spawning anything', async () => {
    const t = setup();
    await expect(superviseRun(t.base(node('worker-tree.mjs'), { gpus: '5' }))).rejects.toThrow(/no GPU "5".*/);
    await expect(superviseRun(t.base(node('worker-tree.mjs'), { gpus: '0', requireFree: { bytes: 100 * GiB } }))).rejects.toMatchObject({ code: 'PREFLIGHT_FAILED' });
    expect(t.out.text()).toBe('');
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
