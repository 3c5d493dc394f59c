/**
 * Rank messages, who counts as a rank, and the rank findings' edges — pure, on plain messages and summaries.
 * The end-to-end runs are in test/supervise/companion/ranks*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  applyCompanionMessage, createCompanionState, parseCompanionLine, rankFindings, rankSummaries, type CompanionMessage, type RankSummary,
} from '../../../src/core/companion/index.js';
import { GiB, MiB } from '../../../src/core/units.js';

const msg = (o: Record<string, unknown>): string => JSON.stringify({ schemaVersion: 1, timeMs: 1, pid: 10, ...o });
const rankMsg = (pid: number, rank: number | null, source: 'env' | 'torch.distributed', backend: string | null = null) =>
  parseCompanionLine(msg({ pid, type: 'rank', source, rank, localRank: rank, worldSize: 2, backend })) as CompanionMessage;

function summary(rank: number, o: Partial<RankSummary> = {}): RankSummary {
  return {
    pid: 100 + rank, rank, localRank: rank, worldSize: 2, backend: 'gloo', rankSource: 'torch.distributed', gpus: [{ gpuUuid: `GPU-${rank}`, gpuIndex: rank }],
    peakAllocatedBytes: null, peakReservedBytes: 10 * GiB, peakProcessBytes: null, peakNonPytorchBytes: null, steps: null, meanStepMs: null, meanDataWaitMs: null,
    firstOomTimeMs: null, oomDevice: null, ended: true, ...o,
  };
}

describe('rank messages', () => {
  it('are read with their fields, and refused with a bad source or an impossible rank', () => {
    expect(rankMsg(10, 1, 'env')).toMatchObject({ type: 'rank', rank: 1, localRank: 1, worldSize: 2, backend: null, source: 'env' });
    expect(() => parseCompanionLine(msg({ type: 'rank', source: 'slurm', rank: 1 }))).toThrow(/expected "env" or "torch.distributed"/);
    expect(() => parseCompanionLine(msg({ type: 'rank', source: 'env', rank: 2 ** 40 }))).toThrow(/rank: 1099511627776 is above 1048576/);
    expect(() => parseCompanionLine(msg({ type: 'rank', source: 'env', rank: -1 }))).toThrow();
  });

  it('torch.distributed\'s word wins over the environment, whichever arrives first', () => {
    const state = createCompanionState();
    applyCompanionMessage(state, rankMsg(10, 3, 'torch.distributed', 'nccl'));
    applyCompanionMessage(state, rankMsg(10, 0, 'env'));
    expect(state.get(10)?.rank).toMatchObject({ rank: 3, source: 'torch.distributed', backend: 'nccl' });
  });

  it('a spawned worker of a rank (same rank number, its parent a rank) is no rank of its own', () => {
    const state = createCompanionState();
    for (const [pid, ppid] of [[10, 5], [11, 10], [12, 5]] as const) {
      applyCompanionMessage(state, parseCompanionLine(msg({ pid, type: 'hello', ppid, companionVersion: '0', torchVersion: '2', pythonVersion: '3', capabilities: {}, config: {} })) as CompanionMessage);
    }
    applyCompanionMessage(state, rankMsg(10, 0, 'env'));
    applyCompanionMessage(state, rankMsg(11, 0, 'env'));
    applyCompanionMessage(state, rankMsg(12, 1, 'env'));
    expect(rankSummaries(state, new Map()).map((r) => [r.pid, r.rank])).toEqual([[10, 0], [12, 1]]);
  });
});

describe('rank findings at their edges', () => {
  const ids = (f: ReturnType<typeof rankFindings>) => f.map((x) => x.id);

  it('imbalance: fires at 1.25× the others\' median, not at 1.2×; relative, so it fires the same at any scale', () => {
    expect(ids(rankFindings([summary(0, { peakReservedBytes: 12 * GiB }), summary(1), summary(2), summary(3)], 4))).toEqual([]);
    const f = rankFindings([summary(0, { peakReservedBytes: 12.5 * GiB }), summary(1), summary(2), summary(3)], 4);
    expect(f.map((x) => [x.id, x.details.rank, x.details.othersMedianBytes])).toEqual([['rank-imbalance', 0, 10 * GiB]]);
    const small = rankFindings([summary(0, { peakReservedBytes: 250 * MiB }), summary(1, { peakReservedBytes: 200 * MiB })], 2);
    expect(ids(small)).toEqual(['rank-imbalance']);
  });

  it('imbalance: one rank alone, or ranks with no figures, say nothing', () => {
    expect(rankFindings([summary(0)], 1)).toEqual([]);
    expect(rankFindings([summary(0, { peakReservedBytes: null }), summary(1, { peakReservedBytes: null })], 2)).toEqual([]);
  });

  it('shared GPU: two of four ranks on one GPU are named; without knowing how many GPUs there were, nothing is said', () => {
    const ranks = [summary(0), summary(1, { gpus: [{ gpuUuid: 'GPU-0', gpuIndex: 0 }] }), summary(2), summary(3)];
    const [f] = rankFindings(ranks, 4);
    expect(f?.title).toBe('2 ranks share GPU 0 although 4 GPUs were there for them: rank 0 (pid 100), rank 1 (pid 101)');
    expect(rankFindings(ranks, null)).toEqual([]);
  });

  it('first OOM: the earliest, with each other rank\'s end; none with one rank or no OOM', () => {
    const ranks = [summary(0, { ended: true }), summary(1, { firstOomTimeMs: 5000 }), summary(2, { firstOomTimeMs: 5200 }), summary(3, { ended: false })];
    const [f] = rankFindings(ranks, 4);
    expect(f?.title).toBe('rank 1 (pid 101) ran out of memory first on GPU 1; rank 0 (pid 100) had no OOM of its own and exited by itself: a collective with the failed rank broke off; ' +
      'rank 2 (pid 102) ran out of memory too, 200 ms later (the same step on equal shards fails on every rank); rank 3 (pid 103) had no OOM of its own and was ended by a signal: the launcher stops the remaining ranks when one fails');
    expect(rankFindings([summary(0, { firstOomTimeMs: 1 })], 1)).toEqual([]);
  });

  it('NCCL: only nccl ranks with a GiB or more outside PyTorch', () => {
    expect(rankFindings([summary(0, { backend: 'nccl', peakNonPytorchBytes: 900 * MiB }), summary(1, { backend: 'nccl', peakNonPytorchBytes: 900 * MiB })], 2)).toEqual([]);
    expect(rankFindings([summary(0, { backend: 'gloo', peakNonPytorchBytes: 3 * GiB }), summary(1, { backend: 'gloo', peakNonPytorchBytes: 3 * GiB })], 2)).toEqual([]);
    expect(ids(rankFindings([summary(0, { backend: 'nccl', peakNonPytorchBytes: 2 * GiB }), summary(1, { backend: 'nccl', peakNonPytorchBytes: 900 * MiB })], 2))).toEqual(['nccl-buffers']);
  });
});
