/**
 * Property tests for the recognizers of other frameworks and for pieces of messages: random text built from
 * their words, and real messages with random damage, never throw, never give a negative or non-integer size,
 * always serialise, and read the same through the byte scanner as through the text scanner.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOomByteScanner, explainOom, oomEventToJson, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

const texts = ['corpus-frameworks.json', 'corpus-fragments.json'].flatMap((name) =>
  (JSON.parse(readFileSync(new URL(`../../fixtures/oom/${name}`, import.meta.url), 'utf8')) as Array<{ text: string }>).map((e) => e.text),
);

const SIZE_FIELDS = ['requestedBytes', 'totalBytes', 'freeBytes', 'allocatedByPytorchBytes', 'reservedUnallocatedBytes', 'reservedTotalBytes', 'allowedBytes', 'poolBytes', 'processInUseBytes'] as const;

function check(text: string): void {
  for (const event of parseOomText(text)) {
    for (const key of SIZE_FIELDS) {
      const v = event[key];
      if (v !== null) expect(typeof v === 'bigint' && v >= 0n, key).toBe(true);
    }
    for (const p of event.otherProcesses) expect(p.pid === null || Number.isInteger(p.pid)).toBe(true);
    const kv = event.kvCache;
    if (kv) for (const v of [kv.neededBytes, kv.availableBytes]) if (v !== null) expect(v >= 0n).toBe(true);
    JSON.stringify(oomEventToJson(event, explainOom(event, { allocConf: 'expandable_segments:True' })));
  }
}

function viaBytes(text: string, cuts: number[]): OomEvent[] {
  const bytes = Buffer.from(text, 'utf8');
  const scanner = createOomByteScanner();
  const out: OomEvent[] = [];
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    out.push(...scanner.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...scanner.push(bytes.subarray(at)), ...scanner.end());
  return out;
}

const json = (events: OomEvent[]): string => JSON.stringify(events.map((e) => oomEventToJson(e, [])));

const WORDS = [
  'cudaMalloc failed: out of memory', 'allocating 9866.00 MiB on device 1: ', 'failed to allocate CUDA0 buffer of size ', 'failed to allocate buffer, size = ',
  'Device memory allocation of size ', 'Out of memory allocating ', '(allocated so far: ', 'out of memory to allocate ', ' bytes (total ', ' bytes)',
  'Out of memory error on GPU 0. ', 'Cannot allocate ', 'MB memory on GPU 0, ', 'GB memory has been allocated and ', 'available memory is only ',
  'enforce allocating <= available failed, ', " > ", "The model's max seq len (", ') is larger than the maximum number of tokens that can be stored in KV cache (',
  "To serve at least one request with the models's max seq len (", 'GiB KV cache is needed', 'available KV cache memory (', 'No available memory for the cache blocks',
  'Failed to allocate request for ', 'MiB (', 'B) on device ordinal ', 'cuMemAllocAsync failed to allocate ', 'Free memory/Total memory: ', '/',
  'Failed to allocate memory for requested buffer of size ', 'Requested amount of GPU memory (', ' bytes) could not be allocated', 'Error Code 2: OutOfMemory',
  'pooled_storage_manager.h:157: ', 'Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY', "Workspace can't be allocated, no enough memory", 'Requested: ', 'Free: ', 'Total: ',
  'reserved in total by PyTorch', 'is reserved by PyTorch but unallocated', 'Process has ', ' memory in use', 'total capacity', 'try setting max_split_size_mb',
  'Resource exhausted: Out', '1.5 GiB', '123,456', '99999999999999999999', '0.000000B', '\n', '\r', ' ', ')', '(',
];

describe('fuzz: other frameworks and pieces', () => {
  it('random text from their words', () => {
    const piece = fc.oneof(fc.constantFrom(...WORDS), fc.integer({ min: 0, max: 2 ** 40 }).map(String), fc.string({ maxLength: 12 }));
    fc.assert(fc.property(fc.array(piece, { maxLength: 50 }), (parts) => check(parts.join(''))), { numRuns: 400 });
  });

  it('real messages with random cuts, insertions, wraps and duplications', () => {
    const mutated = fc
      .tuple(fc.constantFrom(...texts), fc.nat(), fc.nat(), fc.string({ maxLength: 8 }), fc.constantFrom('cut', 'insert', 'dup', 'wrap'))
      .map(([text, a, b, s, op]) => {
        const i = a % (text.length + 1);
        const j = b % (text.length + 1);
        if (op === 'cut') return text.slice(Math.min(i, j), Math.max(i, j));
        if (op === 'insert') return text.slice(0, i) + s + text.slice(i);
        if (op === 'wrap') return `${text.slice(0, i)}\n${text.slice(i)}`;
        return `${text}\n${text.slice(i)}`;
      });
    fc.assert(fc.property(mutated, (text) => check(text)), { numRuns: 500 });
  });

  it('the byte scanner reads damaged real messages exactly as the text scanner does, split anywhere', () => {
    const input = fc.tuple(fc.array(fc.constantFrom(...texts), { minLength: 1, maxLength: 4 }), fc.nat(), fc.string({ maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }));
    fc.assert(
      fc.property(input, ([parts, at, noise, cuts]) => {
        const joined = parts.join('\nnoise line\n');
        const i = at % (joined.length + 1);
        const text = joined.slice(0, i) + noise + joined.slice(i);
        expect(json(viaBytes(text, cuts))).toBe(json(parseOomText(text)));
      }),
      { numRuns: 200 },
    );
  });
});
