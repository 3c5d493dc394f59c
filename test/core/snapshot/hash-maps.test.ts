/** The typed-array hash maps behave like JS Maps for every sequence of operations (fast-check). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AddrMap, PairMap } from '../../../src/core/snapshot/hash-maps.js';
import { runs } from '../../helpers/fuzz.js';

// Few distinct keys, so sequences collide, delete and reinsert; addresses like PyTorch's, plus NaN and 0/-0.
const key = fc.oneof(
  fc.integer({ min: 0, max: 40 }).map((k) => 0x7f0000000000 + k * 512),
  fc.integer({ min: 0, max: 40 }).map((k) => k * 4096),
  fc.constantFrom(NaN, 0, -0, 2 ** 53 - 1, 1.5),
);
const op = fc.oneof(
  fc.tuple(fc.constant('set' as const), key, fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  fc.tuple(fc.constant('delete' as const), key, fc.constant(0)),
  fc.tuple(fc.constant('find' as const), key, fc.integer({ min: 0, max: 1000 })),
);

describe('AddrMap', () => {
  it('matches a Map for any sequence of set, delete and slot updates', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const map = new AddrMap(2);
        const ref = new Map<number, number>();
        for (const [kind, k, v] of ops) {
          if (kind === 'set') {
            map.set(k, v);
            ref.set(k, v);
          } else if (kind === 'delete') expect(map.delete(k)).toBe(ref.delete(k));
          else {
            const slot = Number.isNaN(k) ? -1 : map.find(k);
            if (slot >= 0) {
              expect(map.valueAt(slot)).toBe(ref.get(k));
              if (v % 2 === 0) {
                map.setValueAt(slot, v);
                ref.set(k, v);
              } else {
                map.removeAt(slot);
                ref.delete(k);
              }
            } else if (!Number.isNaN(k)) expect(ref.has(k)).toBe(false);
          }
          expect(map.size).toBe(ref.size);
        }
        for (const [k, v] of ref) expect(map.get(k, -1)).toBe(v);
        const seen = new Map<number, number>();
        map.forEach((k, v) => seen.set(k, v));
        expect(seen).toEqual(ref);
      }),
      { numRuns: runs(300) },
    );
  });
});

describe('PairMap', () => {
  it('finds every pair it stored and nothing else, across growth', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.nat(3000), fc.nat(3000)), { maxLength: 2000, selector: ([a, b]) => `${a},${b}` }), (pairs) => {
        const map = new PairMap(1);
        pairs.forEach(([a, b], i) => map.set(a, b, i));
        pairs.forEach(([a, b], i) => expect(map.get(a, b)).toBe(i));
        expect(map.get(3001, 0)).toBe(-1);
        expect(map.size).toBe(pairs.length);
      }),
      { numRuns: runs(50) },
    );
  });
});
