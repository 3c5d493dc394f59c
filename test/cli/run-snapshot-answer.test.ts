/**
 * The run report's answer for a snapshot written at an OOM: the real snapshot is read and replayed, and the
 * report says whether expandable segments (and the run's own settings) would have avoided the OOM.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerOomSnapshot, type SnapshotOomAnswer } from '../../src/core/allocator/index.js';
import { companionReport } from '../../src/core/companion/index.js';
import { formatBytes } from '../../src/core/index.js';
import { buildReport } from '../../src/core/snapshot/index.js';
import { answerSnapshotFile } from '../../src/cli/commands/snapshot-answer.js';
import { readSnapshotFile } from '../../src/sources/snapshot-file.js';
import { renderPytorch } from '../../src/cli/render/run-pytorch.js';
import { fixedSegmentOomSnapshot, MiB } from '../core/allocator/fixed-segment-oom.js';

const REAL_OOM = new URL('../fixtures/snapshot/real/constructor_memory_snapshot.pickle', import.meta.url).pathname;
const plain = (_: string, text: string): string => text;

/** The lines `gpumem run` prints for an attempt whose companion wrote `file` at an OOM and answered it. */
function reportLines(file: string, answer: SnapshotOomAnswer): string[] {
  const companion = { ...companionReport(new Map(), null, []), snapshots: [file], snapshotAnswers: [answer] };
  return renderPytorch([{ attempt: 1, plugins: { companion } }], plain);
}

describe('run report: the allocator simulation on the snapshot written at an OOM', () => {
  it('replays the real OOM snapshot: the run\'s own settings fail where the real run failed, and says whether expandable segments save it', () => {
    const answer = answerSnapshotFile(REAL_OOM);
    expect(answer.problem).toBeNull();
    const report = buildReport(readSnapshotFile(REAL_OOM), { top: 5, requestBytes: null });
    const withOom = report.devices.filter((d) => d.trace !== null && d.trace.ooms.length > 0);
    expect(answer.devices.map((d) => d.device)).toEqual(withOom.map((d) => d.device));
    for (const d of answer.devices) {
      const realOomIndex = withOom.find((x) => x.device === d.device)?.trace?.ooms[0]?.eventIndex;
      // The faithfulness check: replayed under the recorded settings, the first failure is the real OOM.
      expect(d.recorded.oomAvoided).toBe(false);
      expect(d.recorded.firstOomEventIndex).toBe(realOomIndex);
      expect(d.whatIf.settings).toBe('expandable_segments:True');
      // This run already used expandable segments: asking for them changes nothing.
      expect(d.whatIf).toEqual({ ...d.recorded, settings: 'expandable_segments:True' });
    }
    const lines = reportLines(REAL_OOM, answer).join('\n');
    for (const d of answer.devices) {
      expect(lines).toContain(`allocator simulation, device ${d.device} (trace covers the run): with expandable_segments:True the failed request would still fail (the first allocation to fail is trace event ${d.whatIf.firstOomEventIndex})`);
    }
    expect(lines).not.toMatch(/does not reproduce/);
  });

  it('states the room to spare when expandable segments would have avoided the OOM', () => {
    const answer = answerOomSnapshot('oom.pickle', fixedSegmentOomSnapshot);
    expect(answer.devices).toHaveLength(1);
    const lines = reportLines('oom.pickle', answer);
    expect(lines).toContain(`    allocator simulation, device 0 (trace covers the run): with expandable_segments:True the failed request would have succeeded with ${formatBytes(10 * MiB)} to spare`);
    expect(lines.some((l) => /under the run's own settings the replayed request would still fail/.test(l))).toBe(true);
  });

  it('says why, and keeps the report, when the snapshot cannot be replayed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-answer-'));
    const damaged = join(dir, 'damaged.pickle');
    writeFileSync(damaged, Buffer.from([0x80, 0x04, 0x95, 0xff, 0xff]));
    const bad = answerSnapshotFile(damaged);
    expect(bad.problem).toMatch(/^cannot be replayed: /);
    expect(reportLines(damaged, bad).join('\n')).toContain(`allocator simulation: ${bad.problem}`);
    expect(answerSnapshotFile(join(dir, 'gone.pickle')).problem).toMatch(/^cannot be replayed: no such file/);
    // Bounded: a file over the limit is not read.
    expect(answerSnapshotFile(REAL_OOM, 1024).problem).toBe(`not replayed: ${formatBytes(statSync(REAL_OOM).size)} is over the ${formatBytes(1024)} the report reads`);
  });
});
