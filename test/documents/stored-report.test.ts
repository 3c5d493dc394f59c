/**
 * The run-detail document's stored report: typed field by field when the history read it without damage (a
 * field may be missing, as in a report an older gpumem stored), shown as stored when it is damaged.
 */
import { describe, expect, it } from 'vitest';
import { documentProblems } from '../helpers/document-schemas.js';

const run = { id: 1, argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1, durationMs: 2, status: 'ok', exitCode: 0, exitSignal: null, retries: 0, peakBytes: null, meanStepMs: null, dataWaitShare: null, samplesPerSec: null };
const detail = (report: unknown, reportDamage: string[]): unknown => ({ schemaVersion: 1, run, report, reportDamage });

describe('the stored report of gpumem.run-detail', () => {
  it('a report with fields missing validates; a present field of the wrong type does not', () => {
    const partial = { schemaVersion: 1, argv: ['python'], attempts: [{ attempt: 1, exit: { code: 0, signal: null } }] };
    expect(documentProblems('gpumem.run-detail', detail(partial, []))).toEqual([]);
    const wrong = { ...partial, attempts: [{ attempt: 1, exit: { code: '0', signal: null } }] };
    expect(documentProblems('gpumem.run-detail', detail(wrong, []))).toContain('/report/attempts/0/exit/code must be integer,null');
  });

  it('a damaged report is shown as stored: its damage is listed, its fields are not checked', () => {
    const damaged = { schemaVersion: 1, attempts: [{ attempt: 'first' }] };
    expect(documentProblems('gpumem.run-detail', detail(damaged, ['report.attempts[0].attempt is a string, not a count']))).toEqual([]);
    expect(documentProblems('gpumem.run-detail', detail(damaged, []))).not.toEqual([]);
  });
});
