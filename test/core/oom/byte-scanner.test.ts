/**
 * The byte scanner against the text scanner: for any bytes, split anywhere (inside characters too), it must
 * give exactly the events the text scanner gives for the same bytes decoded as UTF-8. Also the byte marker
 * search against the marker regex, long lines, and non-UTF-8 input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findMarker } from '../../../src/core/oom/byte-search.js';
import { MARKER_PHRASES, MARKER_RE } from '../../../src/core/oom/markers.js';
import { createOomByteScanner, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';
import { runs } from '../../helpers/fuzz.js';

const V5 = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.79 GiB is free. Including non-PyTorch memory, this process has 77.46 GiB memory in use. Of the allocated memory 76.04 GiB is allocated by PyTorch, and 13.88 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)';
const V1 = 'RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)';
const ASYNC = ['torch.OutOfMemoryError: Allocation on device 2 would exceed allowed memory. (out of memory)', 'Currently allocated     : 21.55 GiB', 'Requested               : 952.00 MiB', 'Device limit            : 24.00 GiB'];
const FRAMES = ['Traceback (most recent call last):', '  File "/home/u/proj/train.py", line 88, in main', '    loss = model(batch)', '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl'];

const json = (events: OomEvent[]): string => JSON.stringify(events, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Scans `bytes` in chunks of the given sizes, as Buffers or as plain Uint8Arrays. */
function scanBytes(bytes: Uint8Array, sizes: readonly number[], asBuffer: boolean): OomEvent[] {
  const scanner = createOomByteScanner();
  const out: OomEvent[] = [];
  let pos = 0;
  for (let i = 0; pos < bytes.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length] ?? 1);
    const piece = bytes.subarray(pos, pos + size);
    out.push(...scanner.push(asBuffer ? Buffer.from(piece) : piece.slice()));
    pos += size;
  }
  return [...out, ...scanner.end()];
}

/** What the text scanner finds in the bytes decoded the way a whole-file read decodes them. */
const viaText = (bytes: Uint8Array): string => json(parseOomText(Buffer.from(bytes).toString('utf8')));

const piece = fc.oneof(
  fc.constantFrom(V5, V1, `[rank3]: ${V5}`, `[rank1]: ${V5}`, ...ASYNC, ...FRAMES, 'RuntimeError: CUDA error: out of memory', 'NCCL WARN Cuda failure \'out of memory\'', 'Failed to CUDA calloc 1024 bytes', 'OUT OF MEMORY', 'Resource_Exhausted: x', '\n', '\n', '\n', '\r', '\r\n', 'é', '€', '😀', '\uFEFF').map(utf8),
  fc.string({ maxLength: 30 }).map(utf8),
  fc.fullUnicodeString({ maxLength: 10 }).map(utf8),
  fc.uint8Array({ maxLength: 6 }),
  fc.constantFrom(Uint8Array.of(0xff), Uint8Array.of(0xc3), Uint8Array.of(0xe2, 0x82), Uint8Array.of(0xf0, 0x9f, 0x98), Uint8Array.of(0x80, 0x80)),
);

describe('byte marker search', () => {
  it('finds the same first marker as the regex (property)', () => {
    const word = fc.oneof(fc.constantFrom(...MARKER_PHRASES), fc.string({ maxLength: 12 }), fc.fullUnicodeString({ maxLength: 4 }));
    const cased = fc.tuple(word, fc.array(fc.boolean(), { maxLength: 24 })).map(([w, up]) => [...w].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
    fc.assert(
      fc.property(fc.array(cased, { maxLength: 12 }), fc.nat(), (words, cutSeed) => {
        const text = words.join(' ');
        const bytes = Buffer.from(text, 'utf8');
        const from = cutSeed % (bytes.length + 1);
        // The regex runs on the decoded text from the same place (a character boundary).
        const boundary = Buffer.from(bytes.subarray(0, from).toString('utf8'), 'utf8').length === from;
        if (!boundary) return;
        MARKER_RE.lastIndex = bytes.subarray(0, from).toString('utf8').length;
        const hit = MARKER_RE.exec(text);
        const want = hit ? Buffer.byteLength(text.slice(0, hit.index)) : -1;
        expect(findMarker(bytes, from, bytes.length, bytes.length)).toBe(want);
      }),
      { numRuns: runs(400) },
    );
  });

  it('finds the same first marker as the regex in long text searched in lanes (property)', () => {
    const filler = fc.stringOf(fc.constantFrom('a', 'l', 'o', 'c', ' ', '_', 'M', 'E', 'r', 'y', 'é', '\n', 'x'), { minLength: 200, maxLength: 3000 });
    const marker = fc.tuple(fc.constantFrom(...MARKER_PHRASES), fc.boolean()).map(([p, up]) => (up ? p.toUpperCase() : p));
    fc.assert(
      fc.property(filler, fc.array(fc.tuple(fc.nat(), marker), { maxLength: 4 }), fc.nat(), (base, inserts, fromSeed) => {
        let text = base;
        for (const [at, m] of inserts) text = text.slice(0, at % (text.length + 1)) + m + text.slice(at % (text.length + 1));
        // Latin-1: one byte per character, so regex indexes are byte offsets; é is a non-ASCII byte.
        const bytes = Buffer.from(text, 'latin1');
        const from = fromSeed % (bytes.length + 1);
        MARKER_RE.lastIndex = from;
        const hit = MARKER_RE.exec(text);
        expect(findMarker(bytes, from, bytes.length, bytes.length)).toBe(hit ? hit.index : -1);
      }),
      { numRuns: runs(400) },
    );
  });

  it('finds a phrase at every offset, across lane edges, before a second one a lane later', () => {
    for (const length of [1024, 1031]) {
      const quarter = length >> 2;
      for (const phrase of ['alloc_failed', 'OOM when allocating']) {
        for (let at = 0; at + phrase.length <= length; at++) {
          const bytes = Buffer.alloc(length, 'x');
          bytes.write(phrase, at, 'latin1');
          expect(findMarker(bytes, 0, length, length)).toBe(at);
          if (at + quarter + phrase.length > length || quarter < phrase.length) continue;
          bytes.write(phrase, at + quarter, 'latin1');
          expect(findMarker(bytes, 0, length, length)).toBe(at);
        }
      }
    }
  });

  it('respects the piece end: a phrase must start before it but may run past it', () => {
    const bytes = utf8('xx out of memory');
    expect(findMarker(bytes, 0, 4, bytes.length)).toBe(3);
    expect(findMarker(bytes, 0, 4, bytes.length - 1)).toBe(-1);
    expect(findMarker(bytes, 0, 3, bytes.length)).toBe(-1);
  });
});

describe('byte scanner', () => {
  it('gives exactly the text scanner\'s events for any bytes split anywhere (property)', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }), fc.boolean(), (parts, sizes, asBuffer) => {
        const bytes = concat(parts);
        expect(json(scanBytes(bytes, sizes, asBuffer))).toBe(viaText(bytes));
      }),
      { numRuns: runs(300) },
    );
  });

  it('matches the text scanner at the window and look-back edges with multi-byte and invalid text (property)', () => {
    const filler = fc.constantFrom('é', '€', '😀', 'a', 'invalid');
    // Unit counts put the start of the traceback frame `File "` within a few units of the 16384-unit
    // look-back edge, and the text before the marker around the 2048-unit window edge.
    const frameAtEdge = 16_384 - 2 - (FRAMES[1] as string).length + 2;
    const chunks = fc.constantFrom([65_536, 777], [1 << 20], [4093]);
    fc.assert(
      fc.property(filler, fc.integer({ min: 1990, max: 2060 }), fc.integer({ min: -6, max: 6 }), chunks, (ch, before, shift, sizes) => {
        const after = frameAtEdge + shift;
        const pad = (units: number): Uint8Array => (ch === 'invalid' ? new Uint8Array(units).fill(0xff) : utf8(ch.repeat(Math.floor(units / ch.length))));
        const bytes = concat([
          // The long line makes the traceback's bytes sit deep inside one chunk with 1 MiB chunks.
          utf8(`${FRAMES[0]}\n${'x'.repeat(50_000)}\n${FRAMES[1]}\n`), pad(after), utf8('\n'),
          pad(before), utf8(`${V1} `), pad(after), utf8(`\nstep 2\n${FRAMES[1]}\n`), pad(before), utf8(`\n${V5}\n`),
        ]);
        expect(json(scanBytes(bytes, sizes, true))).toBe(viaText(bytes));
      }),
      { numRuns: runs(80) },
    );
  });

  it('training log: line numbers, user frame, repeats from ranks merged', () => {
    const lines: string[] = [];
    for (let i = 0; i < 50; i++) lines.push(`2024-05-01 12:00:00,000 INFO step ${i} loss=1.234 ünïcödé`);
    lines.push(...FRAMES.slice(0, 3), `[rank0]: ${V5}`, `[rank1]: ${V5}`);
    const bytes = utf8(`${lines.join('\n')}\n`);
    const events = scanBytes(bytes, [1 << 20], true);
    expect(events.map((e) => [e.line, e.ranks, e.lines])).toEqual([[54, [0, 1], [54, 55]]]);
    expect(events[0]?.userFrame).toEqual({ file: '/home/u/proj/train.py', line: 88, function: 'main' });
  });

  it('an OOM at the end of a 3 MB line without newlines is found, memory held to the line cap', () => {
    const bytes = utf8(`${'x'.repeat(3 << 20)} ${V5}`);
    const events = scanBytes(bytes, [1 << 16], true);
    expect(events).toHaveLength(1);
    expect(events[0]?.line).toBe(1);
    expect(events[0]?.requestedBytes).toBe(2684354560n);
  });

  it('reads a message inside Latin-1 (non-UTF-8) text, with the right line number', () => {
    const latin1 = Uint8Array.from('caf\xe9 cr\xe8me\n', (c) => c.charCodeAt(0));
    const bytes = concat([latin1, latin1, utf8(V1), Uint8Array.of(0xe9, 0x0a)]);
    const events = scanBytes(bytes, [5], false);
    expect(events.map((e) => [e.line, e.family, e.requestedBytes])).toEqual([[3, 'pytorch-cuda', 13107200n]]);
  });
});
