/** Every rule, in the order their findings are listed within one severity. Adding a rule: one file, one line here. */
import type { Rule } from '../types.js';
import { allocConf } from './alloc-conf.js';
import { allocRetries } from './alloc-retries.js';
import { deviceOrder } from './device-order.js';
import { duplicateInstances } from './duplicate-instances.js';
import { hiddenProcesses } from './hidden-processes.js';
import { idleKernel } from './idle-kernel.js';
import { lowUtilization } from './low-utilization.js';
import { nearCapacity } from './near-capacity.js';
import { orphans } from './orphans.js';
import { otherUsers } from './other-users.js';
import { pytorchCache } from './pytorch-cache.js';
import { stalePids } from './stale-pids.js';
import { batchOverride, blockingCopy, inputBound, syncCalls } from './step-timing.js';
import { stoppedProcesses } from './stopped.js';
import { unattributed } from './unattributed.js';
import { workerCuda } from './worker-cuda.js';
import { wrongGpu } from './wrong-gpu.js';
import { zombies } from './zombies.js';

export const RULES: readonly Rule[] = [
  nearCapacity,
  allocRetries,
  duplicateInstances,
  workerCuda,
  zombies,
  orphans,
  stoppedProcesses,
  stalePids,
  idleKernel,
  otherUsers,
  wrongGpu,
  deviceOrder,
  unattributed,
  lowUtilization,
  inputBound,
  batchOverride,
  blockingCopy,
  syncCalls,
  pytorchCache,
  hiddenProcesses,
  allocConf,
];
