/** Trace lines written by hand for the replay and fix tests, in the tracer's NDJSON format (docs/estimate.md). */
const MiB = 1024 * 1024;

export const line = (o: Record<string, unknown>): string => JSON.stringify(o);
export const alloc = (id: number, bytes: number, phase: string, op = 'add', module: string | null = 'net.fc'): string =>
  line({ kind: 'alloc', id, bytes, dtype: 'float32', op, module, phase, step: 0, frame: 'train.py:9' });
export const free = (id: number): string => line({ kind: 'free', id });
export const HEADER = line({ kind: 'header', schemaVersion: 1, torch: '2.15.0', steps: 1, stepsDone: 1 });

/**
 * One step by hand: weights 0 (4 MiB); forward saves 1 (2 MiB) and makes a temporary 2 (1 MiB, freed in
 * forward); backward makes the gradient 3 (4 MiB) and frees 1; the optimizer makes state 4 (8 MiB) and a
 * temporary 5 (4 MiB, freed). The peak is in the optimizer: 4 + 4 + 8 + 4 = 20 MiB (+ workspace).
 * `extra` lines go just before the end line.
 */
export function handStep(extra: string[] = []): string {
  return [
    HEADER,
    alloc(0, 4 * MiB, 'other', 'to', null),
    alloc(1, 2 * MiB, 'forward', 'mm'),
    alloc(2, 1 * MiB, 'forward', 'relu'),
    free(2),
    alloc(3, 4 * MiB, 'backward', 'mm', 'backward of MmBackward0'),
    free(1),
    alloc(4, 8 * MiB, 'optimizer', 'zeros_like', 'optimizer'),
    alloc(5, 4 * MiB, 'optimizer', '_foreach_sqrt', 'optimizer'),
    free(5),
    line({ kind: 'tag', category: 'weights', step: 0, ids: [0] }),
    line({ kind: 'tag', category: 'gradients', step: 0, ids: [3] }),
    line({ kind: 'tag', category: 'optimizer-state', step: 0, ids: [4] }),
    ...extra,
    line({ kind: 'end' }),
  ].join('\n');
}
