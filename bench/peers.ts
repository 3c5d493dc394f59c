/**
 * The tools people compare gpumem with, as the benchmarks find them: nvitop and gpustat from a throwaway
 * virtual environment (GPUMEM_BENCH_PEER_VENV, default /tmp/watch-bench-venv; made with
 * `python3 -m venv /tmp/watch-bench-venv && /tmp/watch-bench-venv/bin/pip install nvitop gpustat`), else from
 * PATH. Both load libnvidia-ml.so.1 through the loader's search, so pointing LD_LIBRARY_PATH at the fake
 * driver's folder makes them read the same fake GPUs (and pay the same per-call costs) as gpumem.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const PEER_VENV = process.env.GPUMEM_BENCH_PEER_VENV ?? '/tmp/watch-bench-venv';

/** The peer's program, or null with the line a benchmark prints instead of its row. */
export function findPeer(name: 'nvitop' | 'gpustat'): { path: string } | { missing: string } {
  const inVenv = join(PEER_VENV, 'bin', name);
  if (existsSync(inVenv)) return { path: inVenv };
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return { path: which.stdout.trim() };
  return { missing: `${name}: not installed in ${PEER_VENV} nor on PATH (python3 -m venv ${PEER_VENV} && ${PEER_VENV}/bin/pip install nvitop gpustat)` };
}
