/** Property tests: whatever bytes arrive, the parsers return a model or throw one GpumemError — never anything else, never hang. */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/index.js';
import { parseComputeAppsCsv, parseQueryGpuCsv, parseSmiXml } from '../../../src/sources/smi/index.js';
import { runs } from '../../helpers/fuzz.js';

const dir = new URL('../../fixtures/nvidia-smi/', import.meta.url);
const files = readdirSync(dir).filter((f) => /\.(xml|csv)$/.test(f));
const texts = files.map((f) => ({ f, text: readFileSync(new URL(f, dir), 'utf8') }));

function parserFor(f: string): (text: string) => unknown {
  if (f.endsWith('.xml')) return parseSmiXml;
  return f.includes('query-gpu') ? parseQueryGpuCsv : (t: string) => parseComputeAppsCsv(t);
}

function onlyGpumemErrors(parse: (t: string) => unknown, text: string): void {
  try {
    parse(text);
  } catch (error) {
    if (!(error instanceof GpumemError)) throw error;
    expect(error.message.length).toBeGreaterThan(0);
  }
}

describe('parser robustness', () => {
  it('truncating a real fixture anywhere gives a model or a GpumemError', () => {
    fc.assert(
      fc.property(fc.constantFrom(...texts), fc.double({ min: 0, max: 1, noNaN: true }), ({ f, text }, at) => {
        onlyGpumemErrors(parserFor(f), text.slice(0, Math.floor(text.length * at)));
      }),
      { numRuns: runs(300) },
    );
  });

  it('truncated XML inside the document is always reported, naming the open element', () => {
    const xmls = texts.filter((t) => t.f.endsWith('.xml'));
    fc.assert(
      fc.property(fc.constantFrom(...xmls), fc.double({ min: 0.05, max: 0.95, noNaN: true }), ({ text }, at) => {
        expect(() => parseSmiXml(text.slice(0, Math.floor(text.length * at)))).toThrow(/nvidia-smi XML: (output ends inside <\w+>|tag cut off)/);
      }),
      { numRuns: runs(100) },
    );
  });

  it('mutating characters of a real fixture gives a model or a GpumemError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...texts),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('<', '>', '/', ',', '\n', '"', '&', ' ', 'x', '9', '[', ']', '')), { minLength: 1, maxLength: 8 }),
        ({ f, text }, edits) => {
          let t = text;
          for (const [at, ch] of edits) {
            const i = Math.floor(t.length * at);
            t = t.slice(0, i) + ch + t.slice(i + 1);
          }
          onlyGpumemErrors(parserFor(f), t);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('arbitrary strings never crash the parsers', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (s) => {
        onlyGpumemErrors(parseSmiXml, s);
        onlyGpumemErrors(parseQueryGpuCsv, s);
        onlyGpumemErrors((t) => parseComputeAppsCsv(t), s);
      }),
      { numRuns: runs(500) },
    );
  });

  it('every byte value parsed is a non-negative integer (no NaN, no fractions)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...texts.filter((t) => t.f.endsWith('.xml'))), ({ text }) => {
        const r = parseSmiXml(text);
        for (const d of r.devices) for (const v of Object.values(d.memory)) if (v !== null) expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
      }),
    );
  });
});

describe('prototype keys in headers', () => {
  it('a header field named like an Object.prototype member is just an unknown field', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      onlyGpumemErrors(parseQueryGpuCsv, `${name}, memory.total [MiB]\n1, 100 MiB\n`);
      onlyGpumemErrors(parseComputeAppsCsv, `pid, ${name}\n1, 2\n`);
    }
  });
});
