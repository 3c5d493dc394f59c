/**
 * A size in an OOM message is read whole or not at all: "1e308 GiB" was read as 308 GiB and "-5 GiB" as
 * 5 GiB (only the digits next to the unit were taken) while the output called the numbers exact. Now such a
 * field is null with the printed text as its reason, and every size that is read is finite and ≥ 0.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainOom, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';
import { runs } from '../../helpers/fuzz.js';

const G = 2n ** 30n;

function one(text: string): OomEvent {
  const events = parseOomText(text);
  expect(events).toHaveLength(1);
  return events[0] as OomEvent;
}

describe('sizes that are not plain numbers', () => {
  it('v4+ message: exponent, sign and hex are refused with the printed text as the reason', () => {
    const e = one('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1e308 GiB. GPU 0 has a total capacity of -5 GiB of which 0x10 MiB is free. Including non-PyTorch memory, this process has 12.00 GiB memory in use.');
    expect(e.requestedBytes).toBeNull();
    expect(e.totalBytes).toBeNull();
    expect(e.freeBytes).toBeNull();
    expect(e.unavailable.requestedBytes).toMatch(/printed as "1e308 GiB"/);
    expect(e.unavailable.totalBytes).toMatch(/printed as "-5 GiB"/);
    expect(e.unavailable.freeBytes).toMatch(/printed as "0x10 MiB"/);
    // The sizes that are plain are still read exactly.
    expect(e.processInUseBytes).toBe(12n * G);
  });

  it('v1 message: "1e308 GiB total capacity" is not 308 GiB, "-5 GiB free" is not 5 GiB', () => {
    const e = one('RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 1e308 GiB total capacity; 3.00 GiB already allocated; -5 GiB free; 4.00 GiB reserved in total by PyTorch)');
    expect(e.requestedBytes).toBe(2n * G);
    expect(e.totalBytes).toBeNull();
    expect(e.freeBytes).toBeNull();
    expect(e.unavailable.totalBytes).toMatch(/"1e308 GiB"/);
    expect(e.unavailable.freeBytes).toMatch(/"-5 GiB"/);
  });

  it('a piece of a v1 message: not 308 GiB total and 5 GiB allocated (what the old reader took)', () => {
    const e = one('1e308 GiB total capacity; -5 GiB already allocated; 1.00 GiB free; 4.00 GiB reserved in total by PyTorch)');
    expect(e.totalBytes).toBeNull();
    expect(e.allocatedByPytorchBytes).toBeNull();
    expect(e.freeBytes).toBe(G);
    expect(e.reservedTotalBytes).toBe(4n * G);
    expect(e.unavailable.totalBytes).toMatch(/"1e308 GiB"/);
    expect(e.unavailable.allocatedByPytorchBytes).toMatch(/"-5 GiB"/);
  });

  it('a piece of a v4 message: the same refusal, not a tail of the number', () => {
    const e = one('GPU 0 has a total capacity of 1e308 GiB of which -5 GiB is free. Including non-PyTorch memory, this process has 12.00 GiB memory in use.');
    expect(e.totalBytes).toBeNull();
    expect(e.freeBytes).toBeNull();
    expect(Object.keys(e.unavailable).sort()).toEqual(['freeBytes', 'totalBytes']);
  });

  it('an unreadable process size is not taken for the WSL "not available" sentinel', () => {
    const e = one('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has -1 GiB memory in use.');
    expect(e.processInUseBytes).toBeNull();
    expect(e.unavailable.processInUseBytes).toMatch(/"-1 GiB"/);
    expect(explainOom(e).map((c) => c.id)).not.toContain('wsl-sentinel');
  });

  it('MPS and Paddle messages refuse them too', () => {
    const mps = one('RuntimeError: MPS backend out of memory (MPS allocated: 1e308 GB, other allocations: -5 GB, max allowed: 18.13 GB). Tried to allocate 1.00 MB on private pool.');
    expect(mps.mps?.mpsAllocatedBytes).toBeNull();
    expect(mps.mps?.otherAllocationsBytes).toBeNull();
    expect(mps.unavailable['mps.otherAllocationsBytes']).toMatch(/"-5 GB"/);
    const paddle = one('Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, -6.000000GB memory has been allocated and available memory is only 0.000000B.');
    expect(paddle.poolBytes).toBeNull();
    expect(paddle.unavailable.poolBytes).toMatch(/"-6\.000000 GB"/);
  });
});

describe('every size read is finite and not negative', () => {
  const token = fc.oneof(
    fc.stringMatching(/^[-+]?\d{1,4}(\.\d{1,3})?([eE][-+]?\d{1,3})?$/),
    fc.constantFrom('1e308', '-5', '+3', '0x40', '1,024', '1.5e3', '.5', '5.', '99999999999999999999999', '1_000'),
  );
  const unit = fc.constantFrom('GiB', 'MiB', 'KiB', 'bytes', 'GB', 'G');
  it('on random number tokens in each size field of a v4+ message', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(token, unit), { minLength: 4, maxLength: 4 }), (sizes) => {
        const [a, b, c, d] = sizes.map(([n, u]) => `${n} ${u}`) as [string, string, string, string];
        const text = `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${a}. GPU 0 has a total capacity of ${b} of which ${c} is free. Including non-PyTorch memory, this process has ${d} memory in use.`;
        for (const e of parseOomText(text)) {
          const fields = { requestedBytes: a, totalBytes: b, freeBytes: c, processInUseBytes: d } as const;
          for (const [field, printed] of Object.entries(fields) as Array<[keyof typeof fields, string]>) {
            const bytes = e[field];
            const plain = /^\d+(\.\d{1,6})? /.test(printed);
            if (bytes !== null) {
              expect(bytes >= 0n, `${field} from "${printed}"`).toBe(true);
              // Read only when the whole printed number is a plain one.
              expect(plain, `${field} read from "${printed}"`).toBe(true);
            } else if (!plain) {
              // A size the message printed but that could not be read carries its reason.
              expect(e.unavailable[field] ?? '', `${field} from "${printed}"`).toContain(printed.split(' ')[0]);
            }
          }
        }
      }),
      { numRuns: runs(1000) },
    );
  });
});
