/** A `--params` model's shape must be one attention can have: heads divide hidden, kv-heads divide heads. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { modelFromParams } from '../../../src/core/estimate/params.js';
import { runs } from '../../helpers/fuzz.js';

describe('modelFromParams shape checks', () => {
  it('refuses heads that do not divide hidden, suggesting a divisor', () => {
    expect(() => modelFromParams(7e9, { layers: 32, hidden: 4096, heads: 3 })).toThrow(/--heads 3 does not divide --hidden 4096/);
  });

  it('refuses kv-heads that do not divide heads, or exceed them', () => {
    expect(() => modelFromParams(7e9, { layers: 32, hidden: 4096, heads: 32, kvHeads: 5 })).toThrow(/--kv-heads 5 does not divide --heads 32/);
    expect(() => modelFromParams(7e9, { layers: 32, hidden: 4096, heads: 8, kvHeads: 16 })).toThrow(/--kv-heads 16/);
  });

  it('refuses shape options without --layers and --hidden', () => {
    expect(() => modelFromParams(7e9, { kvHeads: 8 })).toThrow(/--kv-heads shapes the model/);
  });

  it('accepts every dividing shape, and each hint names a value that divides', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), (headDim, heads, kv) => {
        const hidden = headDim * heads;
        const run = (): unknown => modelFromParams(1e9, { layers: 2, hidden, heads, kvHeads: kv });
        if (heads % kv === 0) {
          expect(run()).toMatchObject({ shape: { heads, kvHeads: kv, headDim } });
        } else {
          let hint = '';
          try {
            run();
          } catch (e) {
            hint = (e as { hint: string }).hint;
          }
          const suggested = Number(/--kv-heads (\d+)$/.exec(hint)?.[1]);
          expect(heads % suggested).toBe(0);
        }
      }),
      { numRuns: runs(300) },
    );
  });
});
