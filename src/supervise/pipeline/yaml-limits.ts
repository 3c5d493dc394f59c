/**
 * Limits checked on pipeline YAML before and after the yaml library reads it. The library nests its parse
 * in JavaScript calls, so a file of 20,000 `[` ends in "Maximum call stack size exceeded"; a pipeline needs
 * four levels (stages → stage → env → value), so anything past MAX_PIPELINE_DEPTH is refused by a scan of
 * the text first. Aliases (`*name`) are refused with their line: a pipeline is short enough to write out,
 * and refusing them leaves no alias expansion to bound.
 */
import { isAlias, visit, type Document, type Node } from 'yaml';

/** Deepest nesting a pipeline file may use; real ones use 4. */
export const MAX_PIPELINE_DEPTH = 32;

/**
 * "FILE:LINE: nests deeper than 32 levels…" for the first line whose flow brackets, indentation or run of
 * `- ` markers go past the limit; null when the text stays within it. Quotes and comments are skipped, so
 * brackets inside strings do not count.
 */
export function nestingProblem(text: string, file: string): string | null {
  let flow = 0;
  let line = 1;
  let atLineStart = true;
  let indent = 0;
  let dashes = 0;
  const tooDeep = (): string => `${file}:${line}: nests deeper than ${MAX_PIPELINE_DEPTH} levels; a pipeline file needs 4 (stages, a stage, env, a value)`;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\n') {
      line++;
      atLineStart = true;
      indent = 0;
      dashes = 0;
      continue;
    }
    if (atLineStart) {
      if (ch === ' ') {
        // Two columns per level is the common style; allow generous indentation anyway.
        if (++indent > 4 * MAX_PIPELINE_DEPTH) return tooDeep();
        continue;
      }
      if ((ch === '-' || ch === '?' || ch === ':') && (text[i + 1] === ' ' || text[i + 1] === '\n')) {
        if (++dashes > MAX_PIPELINE_DEPTH) return tooDeep();
        continue;
      }
      atLineStart = false;
    }
    if (ch === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (ch === '"' || ch === "'") {
      // Skip the quoted scalar (doubled '' and \" escapes included); a newline inside keeps the count right.
      for (i++; i < text.length && text[i] !== ch; i++) {
        if (text[i] === '\n') line++;
        else if (ch === '"' && text[i] === '\\') i++;
      }
    } else if (ch === '[' || ch === '{') {
      if (++flow > MAX_PIPELINE_DEPTH) return tooDeep();
    } else if ((ch === ']' || ch === '}') && flow > 0) {
      flow--;
    }
  }
  return null;
}

/** One "FILE:LINE: aliases … are not supported" line per alias in the document. */
export function aliasProblems(doc: Document, file: string, lineOf: (node: Node) => number): string[] {
  const problems: string[] = [];
  visit(doc, {
    Alias(_key, node) {
      if (isAlias(node)) problems.push(`${file}:${lineOf(node)}: aliases (*${node.source}) are not supported in pipeline files; write the value out`);
    },
  });
  return problems;
}
