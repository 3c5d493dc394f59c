/**
 * Finds out-of-memory errors in a child's output as it streams. Lines are counted over the whole output so
 * a finding's line number points into the kept log. The markers are the ones PyTorch, cuBLAS/cuDNN and the
 * CUDA runtime print (see docs/explain.md for the families); the full parsing and cause ranking belong to
 * the explain parser in core/oom, which the supervisor asks for an explanation at the end of the run.
 */
import type { OomFinding } from './report.js';

const MARKERS = /(?:CUDA|HIP|XPU) out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_(?:ALLOC_FAILED|NOT_ENOUGH_WORKSPACE)|cudaErrorMemoryAllocation|OutOfMemoryError/;

export interface OomWatcher {
  /** Feeds a chunk; returns the findings completed by it (one per OOM line). */
  push(chunk: string): OomFinding[];
  /** Flushes a last unterminated line. */
  end(): OomFinding[];
}

/** A streaming OOM detector over a child's combined output. */
export function createOomWatcher(): OomWatcher {
  let partial = '';
  let line = 0;
  // One OOM often prints the marker on two adjacent lines (exception line + "During handling…" repeat):
  // a traceback counts once per 20 lines.
  let lastHit = -1000;
  const scan = (text: string): OomFinding | null => {
    line++;
    if (!MARKERS.test(text)) return null;
    if (line - lastHit < 20) return null;
    lastHit = line;
    return { line, text: text.length > 2000 ? `${text.slice(0, 2000)}…` : text, event: null, causes: [] };
  };
  return {
    push(chunk) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 65536) partial = partial.slice(-65536);
      return lines.map(scan).filter((f): f is OomFinding => f !== null);
    },
    end() {
      const rest = partial;
      partial = '';
      if (rest === '') return [];
      const finding = scan(rest);
      return finding ? [finding] : [];
    },
  };
}
