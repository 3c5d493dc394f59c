/**
 * Property tests: random bytes, random text, and corpus messages with random damage never make the
 * parser or the cause engine throw, and byte fields are never negative.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainOom, oomEventToJson, parseOomText } from '../../../src/core/oom/index.js';
import { runs } from '../../helpers/fuzz.js';

const corpus = (JSON.parse(readFileSync(new URL('../../fixtures/oom/corpus-public.json', import.meta.url), 'utf8')) as Array<{ text: string }>).map((e) => e.text);

function check(text: string): void {
  for (const event of parseOomText(text)) {
    for (const key of ['requestedBytes', 'totalBytes', 'freeBytes', 'allocatedByPytorchBytes', 'reservedUnallocatedBytes'] as const) {
      const v = event[key];
      if (v !== null) expect(v >= 0n).toBe(true);
    }
    JSON.stringify(oomEventToJson(event, explainOom(event, { allocConf: 'expandable_segments:True', cudaVisibleDevices: '3,1' })));
  }
}

describe('fuzz', () => {
  it('random bytes decoded with replacement', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => check(new TextDecoder().decode(bytes))), { numRuns: runs(300) });
  });

  it('random unicode text with markers mixed in', () => {
    const piece = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('out of memory', 'Tried to allocate ', '1.5 GiB', '(GPU 0;', '\n', '\r', '&gt;', 'Process 1 has ', 'NCCL WARN', ' bytes', 'Allocation on device'));
    fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), (parts) => check(parts.join(''))), { numRuns: runs(300) });
  });

  it('corpus messages with random cuts, insertions and duplications', () => {
    const mutated = fc
      .tuple(fc.constantFrom(...corpus), fc.nat(), fc.nat(), fc.string({ maxLength: 8 }), fc.constantFrom('cut', 'insert', 'dup', 'wrap'))
      .map(([text, a, b, s, op]) => {
        const i = a % (text.length + 1);
        const j = b % (text.length + 1);
        if (op === 'cut') return text.slice(0, i) + text.slice(Math.max(i, j));
        if (op === 'insert') return text.slice(0, i) + s + text.slice(i);
        if (op === 'wrap') return text.slice(0, i) + '\n' + text.slice(i);
        return text + '\n' + text.slice(i);
      });
    fc.assert(fc.property(mutated, (text) => check(text)), { numRuns: runs(500) });
  });

  it('a corpus message hard-wrapped anywhere still gives every number', () => {
    const text = corpus.find((t) => t.startsWith('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB')) as string;
    const numbers = (t: string): string => {
      const e = parseOomText(t)[0];
      return JSON.stringify([e?.requestedBytes, e?.gpuIndex, e?.totalBytes, e?.freeBytes, e?.allocatedByPytorchBytes, e?.reservedUnallocatedBytes], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    };
    const want = numbers(text);
    fc.assert(
      fc.property(fc.integer({ min: 40, max: text.length - 1 }), (at) => {
        expect(numbers(`${text.slice(0, at)}\n${text.slice(at)}`)).toBe(want);
      }),
      { numRuns: runs(100) },
    );
  });
});
