/**
 * The glob matcher behind `gpumem explain 'logs/*.err'`: the shell's syntax, no error for any pattern, the
 * same answers as a reference matcher on random patterns and names, and a bounded number of steps for the
 * patterns that made the old RegExp translation backtrack exponentially (counted, not timed).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasGlobSyntax, matchGlob, matchGlobCounted, parseGlob, type GlobToken } from '../../src/core/glob.js';
import { runs } from '../helpers/fuzz.js';

describe('matchGlob', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*.log', 'train.log', true],
    ['*.log', 'train.log.1', false],
    ['*.log', '.hidden.log', true],
    ['rank?.err', 'rank3.err', true],
    ['rank?.err', 'rank10.err', false],
    ['log[0-9].txt', 'log7.txt', true],
    ['log[0-9].txt', 'logx.txt', false],
    ['log[!0-9].txt', 'logx.txt', true],
    ['log[^0-9].txt', 'log7.txt', false],
    ['[]]', ']', true],
    ['[!]]', 'a', true],
    ['[!]]', ']', false],
    ['[a-]', '-', true],
    ['[-a]', '-', true],
    ['[z-a]', 'm', false],
    ['[', '[', true],
    ['log[1', 'log[1', true],
    ['[!]', '[!]', true],
    ['log\\[1].txt', 'log[1].txt', true],
    ['log\\*', 'log*', true],
    ['log\\*', 'logs', false],
    ['[\\]]', ']', true],
    ['a\\', 'a\\', true],
    ['(1*', '(1)', true],
    ['^$.+|{}', '^$.+|{}', true],
    ['*', '', true],
    ['', '', true],
    ['', 'a', false],
    ['?', '', false],
    ['?', '😀', true],
    ['**a**', 'bab', true],
    ['*a*b', 'aXbYb', true],
    ['*a*b', 'aXbYc', false],
  ];
  for (const [pattern, name, expected] of cases) {
    it(`${JSON.stringify(pattern)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(name)}`, () => {
      expect(matchGlob(pattern, name)).toBe(expected);
    });
  }

  it('finds glob syntax only in *, ? and [', () => {
    expect(hasGlobSyntax('log(1).txt')).toBe(false);
    expect(hasGlobSyntax('log[1].txt')).toBe(true);
    expect(hasGlobSyntax('*.log')).toBe(true);
  });

  it('never throws, whatever the pattern', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (pattern, name) => {
        expect(typeof matchGlob(pattern, name)).toBe('boolean');
      }),
      { numRuns: runs(1000) },
    );
  });
});

/** The reference: a RegExp built from the tokens with every character escaped (fine for short test input). */
function referenceRegExp(tokens: readonly GlobToken[]): RegExp {
  const escape = (c: string): string => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;
  const source = tokens
    .map((t) => {
      switch (t.kind) {
        case 'char':
          return escape(t.char);
        case 'any':
          return '.';
        case 'star':
          return '.*';
        case 'class': {
          const body = [...t.chars.map(escape), ...t.ranges.map(([lo, hi]) => (lo <= hi ? `${escape(lo)}-${escape(hi)}` : ''))].join('');
          if (body === '') return t.negated ? '.' : '[]';
          return `[${t.negated ? '^' : ''}${body}]`;
        }
      }
    })
    .join('');
  return new RegExp(`^${source}$`, 'su');
}

/** Writes tokens back as pattern text, escaping what would otherwise have glob meaning. */
function render(tokens: readonly GlobToken[]): string {
  const lit = (c: string): string => (/[*?[\\]/.test(c) ? `\\${c}` : c);
  const inClass = (c: string): string => (/[\]\\\-!^]/.test(c) ? `\\${c}` : c);
  return tokens
    .map((t) => {
      switch (t.kind) {
        case 'char':
          return lit(t.char);
        case 'any':
          return '?';
        case 'star':
          return '*';
        case 'class':
          return `[${t.negated ? '!' : ''}${t.chars.map(inClass).join('')}${t.ranges.map(([lo, hi]) => `${inClass(lo)}-${inClass(hi)}`).join('')}]`;
      }
    })
    .join('');
}

const letter = fc.constantFrom('a', 'b', 'c', '.', '-', ']', '[', '*', '?', '\\', '!', '^', 'é', '😀');
const token: fc.Arbitrary<GlobToken> = fc.oneof(
  letter.map((char) => ({ kind: 'char', char }) as GlobToken),
  fc.constant({ kind: 'any' } as GlobToken),
  fc.constant({ kind: 'star' } as GlobToken),
  fc
    .record({
      negated: fc.boolean(),
      chars: fc.array(letter, { minLength: 1, maxLength: 3 }),
      ranges: fc.array(fc.tuple(letter, letter), { maxLength: 2 }),
    })
    .map((c) => ({ kind: 'class', ...c }) as GlobToken),
);

describe('matchGlob against a reference matcher', () => {
  it('agrees on random patterns and names', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), fc.array(letter, { maxLength: 12 }), (tokens, nameChars) => {
        const name = nameChars.join('');
        const pattern = render(tokens);
        expect(matchGlob(pattern, name), `${pattern} vs ${name}`).toBe(referenceRegExp(tokens).test(name));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('agrees on names made from the pattern itself (where matches are likely)', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), fc.array(letter, { maxLength: 4 }), (tokens, filler) => {
        // Each star and ? becomes some filler text, each class one of its own characters.
        const name = tokens
          .map((t) => (t.kind === 'char' ? t.char : t.kind === 'class' ? (t.chars[0] as string) : filler.join('')))
          .join('');
        const pattern = render(tokens);
        expect(matchGlob(pattern, name), `${pattern} vs ${name}`).toBe(referenceRegExp(tokens).test(name));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('reads the rendered pattern back as the same tokens', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (tokens) => {
        // Runs of stars collapse to one; otherwise parsing undoes rendering.
        const collapsed = tokens.filter((t, i) => !(t.kind === 'star' && tokens[i - 1]?.kind === 'star'));
        expect(parseGlob(render(tokens))).toEqual(collapsed);
      }),
      { numRuns: runs(1000) },
    );
  });
});

describe('matchGlob work is bounded', () => {
  const stepsOf = (pattern: string, name: string): number => matchGlobCounted(parseGlob(pattern), name).steps;

  it('the pattern that hung the RegExp translation (*a*a*…*b on a long name) takes steps linear in the name', () => {
    const pattern = `${'*a'.repeat(14)}*b`;
    const at60 = stepsOf(pattern, 'a'.repeat(60));
    const at600 = stepsOf(pattern, 'a'.repeat(600));
    // A backtracking matcher needs ~C(60,14) ≈ 10^13 steps here; this one about 2 per character.
    expect(at60).toBeLessThanOrEqual(3 * 60);
    expect(at600).toBeLessThanOrEqual(3 * 600);
  });

  it('never takes more than (|name| + 1) × (|pattern| + 1) steps', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 12 }), fc.array(letter, { maxLength: 40 }), (tokens, nameChars) => {
        const steps = matchGlobCounted(tokens, nameChars.join('')).steps;
        expect(steps).toBeLessThanOrEqual((nameChars.length + 1) * (tokens.length + 1));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('the worst case for one restart point (*aaaa…b on aaaa…) grows with |name| × |pattern|, not faster', () => {
    const pattern = `*${'a'.repeat(20)}b`;
    const name = 'a'.repeat(200);
    expect(stepsOf(pattern, name)).toBeLessThanOrEqual((name.length + 1) * (pattern.length + 1));
  });
});
