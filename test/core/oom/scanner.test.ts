/**
 * The streaming scanner on whole logs: line numbers, chunking, de-duplication across ranks, traceback
 * frames, and the messy text people paste.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOomScanner, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';
import { runs } from '../../helpers/fuzz.js';

const V5 = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.79 GiB is free. Including non-PyTorch memory, this process has 77.46 GiB memory in use. Of the allocated memory 76.04 GiB is allocated by PyTorch, and 13.88 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)';

function trainingLog(): string {
  const lines: string[] = [];
  for (let i = 0; i < 50; i++) lines.push(`2024-05-01 12:00:00,000 INFO step ${i} loss=1.234 allocated=12.00 GiB`);
  lines.push('Traceback (most recent call last):');
  lines.push('  File "/home/u/proj/train.py", line 120, in <module>');
  lines.push('    main()');
  lines.push('  File "/home/u/proj/train.py", line 88, in main');
  lines.push('    loss = model(batch)');
  lines.push('  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl');
  lines.push('    return forward_call(*args, **kwargs)');
  lines.push(V5); // line 58
  for (let i = 0; i < 10; i++) lines.push(`epoch 2 step ${i}`);
  lines.push('RuntimeError: CUDA error: out of memory'); // line 69
  return lines.join('\n') + '\n';
}

function scanInChunks(text: string, sizes: number[]): OomEvent[] {
  const scanner = createOomScanner();
  const out: OomEvent[] = [];
  let pos = 0;
  let i = 0;
  while (pos < text.length) {
    const size = Math.max(1, sizes[i++ % sizes.length] ?? 1);
    out.push(...scanner.push(text.slice(pos, pos + size)));
    pos += size;
  }
  return [...out, ...scanner.end()];
}

describe('scanner', () => {
  it('finds every OOM with its line number and user frame', () => {
    const events = parseOomText(trainingLog());
    expect(events.map((e) => [e.line, e.family])).toEqual([[58, 'pytorch-cuda'], [69, 'cuda-runtime']]);
    expect(events[0]?.userFrame).toEqual({ file: '/home/u/proj/train.py', line: 88, function: 'main' });
    expect(events[1]?.userFrame).toBeNull();
  });

  it('gives the same events whatever the chunk sizes (property)', () => {
    const text = trainingLog();
    const expected = JSON.stringify(parseOomText(text), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }), (sizes) => {
        const got = JSON.stringify(scanInChunks(text, sizes), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
        expect(got).toBe(expected);
      }),
      { numRuns: runs(60) },
    );
  });

  it('merges the same message from 8 ranks into one event with 8 ranks', () => {
    const text = [0, 1, 2, 3, 4, 5, 6, 7].map((r) => `[rank${r}]: ${V5}`).join('\n');
    const events = parseOomText(text);
    expect(events).toHaveLength(1);
    expect(events[0]?.ranks).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(events[0]?.lines).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('keeps different messages apart and repeats far apart separate', () => {
    const other = V5.replace('GPU 0', 'GPU 1');
    expect(parseOomText(`${V5}\n${other}`)).toHaveLength(2);
    const scanner = createOomScanner({ dedupWindowLines: 5 });
    const far = `${V5}\n${'x\n'.repeat(10)}${V5}\n`;
    expect([...scanner.push(far), ...scanner.end()].map((e) => e.line)).toEqual([1, 12]);
  });

  it('emits an event during push once the de-dup window has passed', () => {
    const scanner = createOomScanner({ dedupWindowLines: 3 });
    expect(scanner.push(`${V5}\n`)).toEqual([]);
    expect(scanner.push('a\nb\nc\nd\ne\n').map((e) => e.line)).toEqual([1]);
    expect(scanner.end()).toEqual([]);
  });

  it('reads messy pastes: HTML entities, ANSI, markdown, quotes, tqdm, hard wraps', () => {
    const messy = [
      '\u001b[31m&gt; **RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; 8.57 MiB al',
      'ready allocated; 9.28 GiB free; 4.68 MiB cached)**\u001b[0m',
    ].join('\n');
    const e = parseOomText(messy)[0];
    expect(e?.allocatedByPytorchBytes).toBe(8986296n);
    expect(e?.reservedUnallocatedBytes).toBe(4907336n);
    const tqdm = ' 45%|████▌     | 450/1000 [00:10<00:12, 43.1it/s]\r 46%|████▋     | 460/1000\rtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity of 23.65 GiB of which 5.06 MiB is free.';
    expect(parseOomText(tqdm)[0]?.gpuIndex).toBe(3);
  });

  it('async allocator table across lines with a vLLM prefix on each', () => {
    const p = '(VllmWorker rank=2 pid=77) ERROR 07-07 15:19:48 [x.py:1] ';
    const text = [
      `${p}torch.OutOfMemoryError: Allocation on device 2 would exceed allowed memory. (out of memory)`,
      `${p}Currently allocated     : 21.55 GiB`,
      `${p}Requested               : 952.00 MiB`,
      `${p}Device limit            : 24.00 GiB`,
      `${p}Free (according to CUDA): 0 bytes`,
      `${p}PyTorch limit (set by user-supplied memory fraction)`,
      `${p}                        : 17179869184.00 GiB`,
    ].join('\n');
    const e = parseOomText(text)[0];
    expect(e?.ranks).toEqual([2]);
    expect(e?.requestedBytes).toBe(998244352n);
    expect(e?.allowedBytes).toBeNull();
    expect(e?.unavailable.allowedBytes).toMatch(/SIZE_MAX/);
  });

  it('a pathological 1 MB line finishes quickly (coarse bound, not a benchmark)', () => {
    const lines = [
      '1'.repeat(1 << 20),
      'Tried to allocate '.repeat(60_000),
      `${'out of memory '.repeat(70_000)}`,
      `${'(GPU 0; '.repeat(130_000)}`,
      `${'1.5 GiB '.repeat(130_000)}`,
    ];
    for (const line of lines) {
      const t0 = performance.now();
      parseOomText(line);
      expect(performance.now() - t0).toBeLessThan(2000);
    }
  });

  it('an OOM at the end of a 3 MB line without newlines is still found', () => {
    const text = `${'x'.repeat(3 << 20)} ${V5}`;
    const events = scanInChunks(text, [1 << 16]);
    expect(events).toHaveLength(1);
    expect(events[0]?.line).toBe(1);
  });
});
