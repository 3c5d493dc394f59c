/**
 * The numbers the rules compare against, in one place so docs/diagnose.md can quote them and tests can
 * reach the edges. Each says why it has its value.
 */
import { GiB, MiB } from '../units.js';

export const THRESHOLDS = {
  /**
   * alloc-conf speaks only of processes holding more than this: a CUDA context costs roughly 300–600 MiB on
   * current drivers, and below a GiB there is too little PyTorch memory for fragmentation to matter. Not a
   * role: what a process is comes from its process tree (roles.ts), never from its size.
   */
  allocConfMinBytes: 1 * GiB,
  /** Below this the gap between the device's used total and its processes is driver bookkeeping (tens of MiB on an H100). */
  residualMinBytes: 256 * MiB,
  /** A GPU at or above this fraction of its total (used + reserved) leaves too little headroom for an allocation spike. */
  nearCapacityFraction: 0.9,
  /** At or above this fraction the OOM risk is critical. */
  nearCapacityCriticalFraction: 0.95,
  /**
   * Below this fraction of the GPU's memory used, an under-used GPU also has room for a larger batch (the
   * low-utilization finding then says so); the finding itself fires whatever the memory.
   */
  highMemoryFraction: 0.25,
  /**
   * A GPU whose mean utilization over the window stays at or below this percentage is under-used: a training
   * loop that keeps its GPU fed runs at 80–100 %; a quarter or less means it waits most of each step.
   */
  lowUtilPct: 25,
  /** Utilization needs at least this many samples before a rule calls a GPU or process idle or busy. */
  minUtilSamples: 2,
  /** A process counts as active training when its (or its device's) mean utilization is at least this. */
  activeUtilPct: 5,
  /**
   * PyTorch's cache (reserved − allocated) of one process worth a finding: at least this many bytes … A
   * cache of a few hundred MiB is the allocator doing its job; gigabytes held idle starve other processes
   * and usually mean fragmentation (blocks too small to reuse) or a finished phase's memory never returned.
   */
  pytorchCachedMinBytes: 1 * GiB,
  /** … and at least this fraction of what PyTorch reserved. */
  pytorchCachedMinFraction: 0.25,
} as const;

export type Thresholds = typeof THRESHOLDS;
