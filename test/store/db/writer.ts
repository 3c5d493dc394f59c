// Writes complete runs to the history as fast as it can until killed: the crash-safety test kills it
// with SIGKILL mid-write. argv: DB_PATH
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../../src/store/index.js';

const db = openHistory(process.argv[2] as string);
const attempt = (n: number): HistoryReport['attempts'][number] => ({
  attempt: n, argv: ['train', String(n)], batch: { batch: 8, accum: 1 }, durationMs: 10, exit: { code: 0, signal: null },
  peaks: [{ index: 0, uuid: 'GPU-a', peakBytes: 1000 * n, atMs: 5, chosen: true }], ooms: [], cleanup: { leftovers: [] },
  timeline: Array.from({ length: 300 }, (_, i) => ({ tMs: i, bytes: { 'GPU-a': i } })),
});
process.stdout.write('writing\n');
for (let i = 0; ; i++) {
  const id = beginRun(db, { argv: ['train'], cwd: '/', startedAtMs: i });
  completeRun(db, id, {
    argv: ['train'], cwd: '/', startedAtMs: i, durationMs: 10, gpus: [{ index: 0, uuid: 'GPU-a' }], env: [],
    attempts: [attempt(1), attempt(2)], retries: 1, exit: { code: 0, signal: null },
  });
}
