/**
 * Reads and validates a pipeline file (YAML) completely before anything runs. Every problem is collected
 * with its line and field ("pipeline.yaml:12: stages[1].batch: must be a positive whole number") and
 * reported in one error, so a typo in the eval stage is found before a 10-hour training stage starts.
 */
import { LineCounter, isMap, isSeq, parseDocument, type Node, type YAMLMap } from 'yaml';
import { GpumemError } from '../../core/errors.js';
import { nameRecord } from '../../core/records.js';
import { parseByteSize } from '../../core/units.js';
import { aliasProblems, nestingProblem } from './yaml-limits.js';

export interface StageSpec {
  name: string;
  argv: string[];
  gpus: string | undefined;
  batch: number | undefined;
  accum: number | undefined;
  retryOom: number;
  env: Record<string, string>;
  line: number;
}

export interface PipelineSpec {
  name: string;
  gpus: string | undefined;
  toleranceBytes: number | undefined;
  stages: StageSpec[];
}

const TOP_KEYS = ['name', 'gpus', 'retry_oom', 'env', 'tolerance', 'stages'];
const STAGE_KEYS = ['name', 'command', 'gpus', 'batch', 'accum', 'retry_oom', 'env'];

/**
 * Splits a command string into argv: whitespace separates words, single and double quotes group, a
 * backslash escapes the next character. No shell features (use `[sh, -c, "…"]` for those). Returns null
 * on an unclosed quote.
 */
export function splitCommand(text: string): string[] | null {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) return null;
  if (inWord) out.push(word);
  return out;
}

/** Parses and validates pipeline text; `file` names it in messages. Throws one INPUT_MALFORMED listing every problem. */
export function parsePipeline(text: string, file: string): PipelineSpec {
  const tooDeep = nestingProblem(text, file);
  if (tooDeep !== null) throw malformed(file, [tooDeep]);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const problems: string[] = [];
  const lineOf = (node: unknown): number => {
    const range = (node as Node | null)?.range;
    return range ? counter.linePos(range[0]).line : 1;
  };
  const problem = (node: unknown, field: string, message: string): void => void problems.push(`${file}:${lineOf(node)}: ${field}: ${message}`);
  // Only the first syntax error: the ones after it are usually the parser losing its place, not new mistakes.
  const first = doc.errors[0];
  if (first) problems.push(`${file}:${counter.linePos(first.pos[0]).line}: ${first.message.split('\n')[0]}`);
  else problems.push(...aliasProblems(doc, file, lineOf));
  if (problems.length > 0) throw malformed(file, problems);
  const root = doc.contents;
  if (!isMap(root)) throw malformed(file, [`${file}:1: the file must be a mapping with a "stages" list`]);

  const get = (map: YAMLMap, key: string): Node | undefined => map.get(key, true) as Node | undefined;
  const str = (node: Node | undefined, field: string): string | undefined => {
    if (node === undefined) return undefined;
    const v = (node as { toJSON(): unknown }).toJSON();
    if (typeof v === 'string' || typeof v === 'number') return String(v);
    problem(node, field, 'must be a string');
    return undefined;
  };
  const int = (node: Node | undefined, field: string, min: number): number | undefined => {
    if (node === undefined) return undefined;
    const v = (node as { toJSON(): unknown }).toJSON();
    if (typeof v === 'number' && Number.isInteger(v) && v >= min) return v;
    problem(node, field, `must be a whole number ≥ ${min}`);
    return undefined;
  };
  const envOf = (node: Node | undefined, field: string): Record<string, string> => {
    if (node === undefined) return {};
    if (!isMap(node)) {
      problem(node, field, 'must be a mapping NAME: value');
      return {};
    }
    const env = nameRecord<string>();
    for (const pair of node.items) {
      const key = String((pair.key as { toJSON(): unknown }).toJSON());
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) problem(pair.key, `${field}.${key}`, 'is not a valid variable name');
      const value = str(pair.value as Node, `${field}.${key}`);
      if (value !== undefined) env[key] = value;
    }
    return env;
  };
  const unknownKeys = (map: YAMLMap, allowed: string[], where: string): void => {
    for (const pair of map.items) {
      const key = String((pair.key as { toJSON(): unknown }).toJSON());
      if (!allowed.includes(key)) problem(pair.key, `${where}${key}`, `unknown field (allowed: ${allowed.join(', ')})`);
    }
  };

  unknownKeys(root, TOP_KEYS, '');
  const gpus = str(get(root, 'gpus'), 'gpus');
  const retryDefault = int(get(root, 'retry_oom'), 'retry_oom', 0) ?? 0;
  const envDefault = envOf(get(root, 'env'), 'env');
  let toleranceBytes: number | undefined;
  const tolNode = get(root, 'tolerance');
  const tolText = str(tolNode, 'tolerance');
  if (tolText !== undefined) {
    try {
      toleranceBytes = parseByteSize(tolText, 'tolerance');
    } catch (error) {
      problem(tolNode, 'tolerance', (error as Error).message);
    }
  }
  const stagesNode = get(root, 'stages');
  const stages: StageSpec[] = [];
  if (!isSeq(stagesNode) || stagesNode.items.length === 0) {
    problem(stagesNode ?? root, 'stages', 'must be a non-empty list of stages');
  } else {
    stagesNode.items.forEach((item, i) => {
      const at = `stages[${i}]`;
      if (!isMap(item)) return problem(item, at, 'must be a mapping with name and command');
      unknownKeys(item, STAGE_KEYS, `${at}.`);
      const name = str(get(item, 'name'), `${at}.name`);
      if (name === undefined && get(item, 'name') === undefined) problem(item, `${at}.name`, 'is required');
      else if (name !== undefined && stages.some((s) => s.name === name)) problem(get(item, 'name'), `${at}.name`, `"${name}" is used by an earlier stage`);
      const cmdNode = get(item, 'command');
      let argv: string[] | null = null;
      if (cmdNode === undefined) problem(item, `${at}.command`, 'is required');
      else if (isSeq(cmdNode)) {
        argv = cmdNode.items.map((n, j) => str(n as Node, `${at}.command[${j}]`) ?? '');
      } else {
        const text = str(cmdNode, `${at}.command`);
        argv = text === undefined ? null : splitCommand(text);
        if (text !== undefined && argv === null) problem(cmdNode, `${at}.command`, 'has an unclosed quote');
      }
      if (argv !== null && argv.length === 0) problem(cmdNode, `${at}.command`, 'is empty');
      const batch = int(get(item, 'batch'), `${at}.batch`, 1);
      const accum = int(get(item, 'accum'), `${at}.accum`, 1);
      if (argv && argv.some((a) => a.includes('{batch}') || a.includes('{accum}')) && batch === undefined) {
        problem(cmdNode, `${at}.command`, 'uses {batch}/{accum} but the stage has no batch');
      }
      stages.push({
        name: name ?? `stage${i + 1}`, argv: argv ?? [], gpus: str(get(item, 'gpus'), `${at}.gpus`) ?? gpus, batch, accum,
        retryOom: int(get(item, 'retry_oom'), `${at}.retry_oom`, 0) ?? retryDefault,
        env: { ...envDefault, ...envOf(get(item, 'env'), `${at}.env`) }, line: lineOf(item),
      });
    });
  }
  if (problems.length > 0) throw malformed(file, problems);
  return { name: str(get(root, 'name'), 'name') ?? file, gpus, toleranceBytes, stages };
}

function malformed(file: string, problems: string[]): GpumemError {
  const shown = problems.slice(0, 8);
  const more = problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : '';
  return new GpumemError('INPUT_MALFORMED', `${shown.join('; ')}${more}`, {
    hint: 'fix the pipeline file; nothing was run. The format is in docs/pipeline.md',
    details: { file, problems },
  });
}
