/**
 * The CUDA_VISIBLE_DEVICES the run's processes really started with. A launcher may set the variable itself
 * (`CUDA_VISIBLE_DEVICES=0 python train.py` inside a script), and then "GPU 0" in an OOM message is entry 0
 * of the child's list, not of the one gpumem planned: mapping it with gpumem's would contradict the live
 * device-mismatch warning. Each process's value is read once from /proc/PID/environ (the environment it
 * was started with) while it holds GPU memory, so it is still known when the OOM text is read after exit.
 */
import { parseCudaEnv, readEnviron } from '../sources/index.js';

export interface ChildCudaEnv {
  /**
   * Reads the value of each pid again (call while the processes run: every monitor tick, with the pids that
   * hold GPU memory — few — since an exec replaces the environment); the last value read is kept.
   */
  note(pids: Iterable<number>): void;
  /**
   * The value to map device ordinals with: the one the processes holding GPU memory (else every process
   * noted) agree on; `planned` when none was readable or they disagree. Undefined = the variable is unset.
   */
  visibleDevices(holders: readonly number[]): string | undefined;
}

/** Creates the reader; `planned` is the value gpumem gave the child. */
export function childCudaEnv(planned: string | undefined): ChildCudaEnv {
  const byPid = new Map<number, string | undefined>();
  return {
    note(pids) {
      for (const pid of pids) {
        const raw = readEnviron(pid);
        if (raw !== null) byPid.set(pid, parseCudaEnv(raw).CUDA_VISIBLE_DEVICES);
      }
    },
    visibleDevices(holders) {
      this.note(holders);
      const known = holders.filter((pid) => byPid.has(pid));
      const pids = known.length > 0 ? known : [...byPid.keys()];
      const values = new Set(pids.map((pid) => byPid.get(pid)));
      return values.size === 1 ? [...values][0] : planned;
    },
  };
}
