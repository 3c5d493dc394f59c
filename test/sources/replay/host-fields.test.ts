/**
 * The host facts a live source adds when it reads them (CPU ticks and when they were read, CPU %, RSS, the
 * job) are checked in a recording like every other field: a hand-edited value is refused with its place named,
 * and whatever is accepted makes a `status --json` document its own schema accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { statusJson } from '../../../src/core/documents/status.js';
import { GpumemError } from '../../../src/core/index.js';
import { parseRecordedSample } from '../../../src/sources/replay/format.js';
import { documentProblems } from '../../helpers/document-schemas.js';
import { runs } from '../../helpers/fuzz.js';
import { device, GiB, proc, sample } from '../../core/diagnose/build.js';

/** A sample whose process has every later host fact, as `gpumem record` writes them on a Slurm node. */
function line(): Record<string, any> {
  const p = proc(4242, 0, 2 * GiB, { cpuTicks: 1200, cpuTicksAtMs: 1_700_000_000_000, smUtilPct: 40 });
  const host = { ...p.host!, cpuPct: 12.5, rssBytes: 3 * GiB, job: { slurmJobId: '81', podUid: null, podName: null, podNamespace: null, runMark: null } };
  return JSON.parse(JSON.stringify(sample(1_700_000_000_500, [device(0, 3 * GiB)], [{ ...p, host }])));
}

const parse = (s: Record<string, any>) => parseRecordedSample(JSON.stringify(s), 'train.ndjson', 4);

describe('later host facts in a recording', () => {
  it('a whole line is read back with them', () => {
    const host = parse(line()).processes[0]!.host!;
    expect([host.cpuTicks, host.cpuTicksAtMs, host.cpuPct, host.rssBytes, host.job?.slurmJobId]).toEqual([1200, 1_700_000_000_000, 12.5, 3 * GiB, '81']);
  });

  it('absent stays absent; a null where null means unknown is kept', () => {
    const s = line();
    for (const name of ['cpuTicks', 'cpuTicksAtMs', 'cpuPct', 'rssBytes', 'job']) delete s.processes[0].host[name];
    const host = parse(s).processes[0]!.host!;
    expect(['cpuTicks', 'cpuTicksAtMs', 'cpuPct', 'rssBytes', 'job'].filter((n) => n in host)).toEqual([]);
    const nulls = line();
    Object.assign(nulls.processes[0].host, { cpuTicks: null, cpuPct: null, rssBytes: null, job: null });
    expect(parse(nulls).processes[0]!.host).toMatchObject({ cpuTicks: null, cpuPct: null, rssBytes: null, job: null });
  });

  it('names a bad value, where it is', () => {
    const cases: Array<[(h: Record<string, any>) => void, RegExp]> = [
      [(h) => (h.cpuTicks = '1200'), /:4: .*processes\[0\]\.host\.cpuTicks must be a number or null/],
      [(h) => (h.cpuTicksAtMs = null), /processes\[0\]\.host\.cpuTicksAtMs must be a time in ms since the epoch$/],
      [(h) => (h.cpuTicksAtMs = 1e20), /processes\[0\]\.host\.cpuTicksAtMs must be a time/],
      [(h) => (h.cpuPct = true), /processes\[0\]\.host\.cpuPct must be a number or null/],
      [(h) => (h.rssBytes = -4096), /processes\[0\]\.host\.rssBytes must be a whole byte count ≥ 0 or null/],
      [(h) => (h.rssBytes = 1.5), /processes\[0\]\.host\.rssBytes must be a whole byte count/],
      [(h) => (h.job = 'slurm'), /processes\[0\]\.host\.job must be an object/],
      [(h) => (h.job = { slurmJobId: 81 }), /processes\[0\]\.host\.job\.slurmJobId must be a string or null/],
    ];
    for (const [edit, message] of cases) {
      const s = line();
      edit(s.processes[0].host);
      expect(() => parse(s)).toThrow(message);
    }
  });

  it('fuzz: any value anywhere in the host facts is one GpumemError, or a status document its schema accepts', () => {
    const keys = Object.keys(line().processes[0].host);
    fc.assert(
      fc.property(fc.constantFrom(...keys, 'job.slurmJobId', 'job.runMark'), fc.jsonValue(), (at, value) => {
        const s = line();
        const [name, sub] = at.split('.') as [string, string | undefined];
        if (sub === undefined) s.processes[0].host[name] = value;
        else s.processes[0].host[name][sub] = value;
        let parsed;
        try {
          parsed = parse(s);
        } catch (error) {
          expect(error).toBeInstanceOf(GpumemError);
          return;
        }
        expect(documentProblems('gpumem.status', statusJson(parsed))).toEqual([]);
      }),
      { numRuns: runs(600) },
    );
  });
});
