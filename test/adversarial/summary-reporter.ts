/**
 * Prints one summary line for the adversarial suite after a vitest run: how many hostile cases ran, were
 * skipped (each skip says why in its test name or output), and how many failed as a hang, a stack trace,
 * a lost record or an escape (the classes harness.ts puts at the start of its failure messages).
 */
import type { Reporter } from 'vitest/reporters';

interface TaskLike {
  type: string;
  name: string;
  mode?: string;
  tasks?: TaskLike[];
  result?: { state?: string; errors?: Array<{ message?: string }> };
}

const CLASSES = { hangs: 'HANG', stackTraces: 'STACK TRACE', lostRecords: 'LOST RECORD', escapes: 'ESCAPE' } as const;

function leaves(task: TaskLike): TaskLike[] {
  return task.tasks ? task.tasks.flatMap(leaves) : task.type === 'test' ? [task] : [];
}

export default class AdversarialSummary implements Reporter {
  onFinished(files: Array<TaskLike & { filepath: string }> = []): void {
    const cases = files.filter((f) => /[\\/]test[\\/]adversarial[\\/]/.test(f.filepath)).flatMap(leaves);
    if (cases.length === 0) return;
    const count = { run: 0, passed: 0, skipped: 0, failed: 0, hangs: 0, stackTraces: 0, lostRecords: 0, escapes: 0 };
    for (const c of cases) {
      if (c.mode === 'skip' || c.mode === 'todo' || c.result?.state === 'skip') {
        count.skipped++;
        continue;
      }
      count.run++;
      if (c.result?.state === 'pass') count.passed++;
      else if (c.result?.state === 'fail') {
        count.failed++;
        const text = (c.result.errors ?? []).map((e) => e.message ?? '').join('\n');
        for (const [key, prefix] of Object.entries(CLASSES)) if (text.includes(`${prefix}:`)) count[key as keyof typeof CLASSES]++;
      }
    }
    process.stdout.write(
      `\nadversarial suite: ${count.run} cases run, ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped; ` +
        `${count.hangs} hangs, ${count.stackTraces} stack traces, ${count.lostRecords} lost records, ${count.escapes} escapes\n`,
    );
  }
}
