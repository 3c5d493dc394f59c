/**
 * Shell-style glob matching for one path part (`*.log`, `rank?.err`, `log[0-9].txt`), without building a
 * RegExp from the user's text: a pattern such as `[` or `(` is then never a syntax error, and a pattern with
 * many stars (`*a*a*a*…b`) cannot make the match backtrack exponentially. The matcher keeps one restart
 * point (the latest `*`), so its work is bounded by |name| × |pattern| steps and is usually linear.
 *
 * Syntax: `*` any run of characters, `?` any one character, `[abc]` / `[a-z]` one of a set, `[!…]` or `[^…]`
 * one not in it (a `]` first in the set, or a `-` first or last, is taken literally), and `\x` the
 * character x itself. A `[` with no closing `]` is an ordinary character. A leading dot gets no special
 * treatment: `*.log` also names `.hidden.log`.
 */

/** One part of a parsed pattern. */
export type GlobToken =
  | { kind: 'char'; char: string }
  | { kind: 'any' }
  | { kind: 'star' }
  | { kind: 'class'; negated: boolean; chars: string[]; ranges: Array<[string, string]> };

/** True when `text` holds a character with glob meaning (`*`, `?`, `[`); escapes are not looked at. */
export function hasGlobSyntax(text: string): boolean {
  return text.includes('*') || text.includes('?') || text.includes('[');
}

/** Splits a pattern into tokens (by code point, so an emoji is one character). Never throws. */
export function parseGlob(pattern: string): GlobToken[] {
  const chars = Array.from(pattern);
  const tokens: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '*') {
      // A run of stars means the same as one; keeping one keeps the restart logic simple.
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') {
      tokens.push({ kind: 'any' });
    } else if (c === '\\' && i + 1 < chars.length) {
      tokens.push({ kind: 'char', char: chars[++i] as string });
    } else if (c === '[') {
      const parsed = parseClass(chars, i);
      if (parsed) {
        tokens.push(parsed.token);
        i = parsed.end;
      } else {
        tokens.push({ kind: 'char', char: c });
      }
    } else {
      tokens.push({ kind: 'char', char: c });
    }
  }
  return tokens;
}

/** Reads `[…]` starting at `open`; null when it is never closed (the `[` is then literal). */
function parseClass(chars: readonly string[], open: number): { token: GlobToken; end: number } | null {
  let i = open + 1;
  const negated = chars[i] === '!' || chars[i] === '^';
  if (negated) i++;
  const members: string[] = [];
  const literal: boolean[] = [];
  const first = i;
  for (; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === ']' && i > first) break;
    if (c === '\\' && i + 1 < chars.length) {
      members.push(chars[++i] as string);
      literal.push(true);
    } else {
      members.push(c);
      literal.push(false);
    }
  }
  if (i >= chars.length) return null;
  const set: string[] = [];
  const ranges: Array<[string, string]> = [];
  for (let k = 0; k < members.length; k++) {
    const isRange = members[k + 1] === '-' && !literal[k + 1] && k + 2 < members.length;
    if (isRange) {
      ranges.push([members[k] as string, members[k + 2] as string]);
      k += 2;
    } else {
      set.push(members[k] as string);
    }
  }
  return { token: { kind: 'class', negated, chars: set, ranges }, end: i };
}

function inClass(token: Extract<GlobToken, { kind: 'class' }>, c: string): boolean {
  const code = c.codePointAt(0) as number;
  const member = token.chars.includes(c) || token.ranges.some(([lo, hi]) => (lo.codePointAt(0) as number) <= code && code <= (hi.codePointAt(0) as number));
  return member !== token.negated;
}

function matchesOne(token: GlobToken, c: string): boolean {
  switch (token.kind) {
    case 'char':
      return token.char === c;
    case 'any':
      return true;
    case 'class':
      return inClass(token, c);
    case 'star':
      return false;
  }
}

/**
 * Matches `name` against parsed `tokens` and counts the comparisons made (the count is what tests check
 * the time bound with). Greedy with one restart point: when a later `*` is reached, an earlier one never
 * needs to take more characters, so only the latest `*` is ever retried.
 */
export function matchGlobCounted(tokens: readonly GlobToken[], name: string): { matched: boolean; steps: number } {
  const chars = Array.from(name);
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  let steps = 0;
  while (n < chars.length) {
    steps++;
    const token = tokens[p];
    if (token?.kind === 'star') {
      starP = p++;
      starN = n;
    } else if (token !== undefined && matchesOne(token, chars[n] as string)) {
      p++;
      n++;
    } else if (starP >= 0) {
      p = starP + 1;
      n = ++starN;
    } else {
      return { matched: false, steps };
    }
  }
  while (tokens[p]?.kind === 'star') {
    steps++;
    p++;
  }
  return { matched: p === tokens.length, steps };
}

/** True when `name` matches the glob `pattern` (see the top of this file for the syntax). */
export function matchGlob(pattern: string, name: string): boolean {
  return matchGlobCounted(parseGlob(pattern), name).matched;
}
