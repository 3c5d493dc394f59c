/** Renders help text and the docs page from the options table, so both always match the parser. */
import { describeRange } from './args.js';
import type { CommandSpec, OptionSpec } from './spec.js';
import { COMMANDS, GLOBAL_OPTIONS } from './table.js';
import { EXIT_CODE_DOCS } from './exit-codes.js';
import { FAMILIAR_WORDS } from './familiar-words.js';

const LABEL_WIDTH = 30;

function optionLabel(o: OptionSpec): string {
  const value = o.type === 'boolean' ? '' : ` ${o.value ?? 'VALUE'}`;
  return `${o.short ? `-${o.short}, ` : ''}--${o.name}${value}`;
}

function optionText(o: OptionSpec): string {
  const extra = [
    'choices' in o && o.choices ? `one of: ${o.choices.join(', ')}` : '',
    o.type === 'number' ? describeRange(o) : '',
    'default' in o && o.default !== undefined ? `default: ${String(o.default)}` : '',
    o.type === 'list' ? ('wholeValues' in o && o.wholeValues ? 'repeatable' : 'repeatable, comma-separated') : '',
  ].filter((s) => s !== '');
  return extra.length > 0 ? `${o.description} (${extra.join('; ')})` : o.description;
}

/**
 * Breaks `text` into lines of at most `width` characters at spaces, the first prefixed by `first` and the
 * rest by `indent` (a word longer than a line stays whole rather than being cut).
 */
export function wrap(text: string, width: number, first = '', indent = first.replace(/./g, ' ')): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line += empty ? word : ` ${word}`;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** Narrowest width help wraps to, so a tiny terminal still gets readable columns. */
const MIN_COLUMNS = 60;

/** `gpumem CMD --help`, wrapped to `columns` (the terminal's width). */
export function commandHelp(spec: CommandSpec, columns = 100): string {
  const width = Math.max(MIN_COLUMNS, columns) - 1;
  // Alternative forms ("A | B") each get a line of their own, so a long usage never runs past the terminal.
  const forms = spec.usage.split(' | ').map((form) => form.replace(/^gpumem /, ''));
  const usage = forms.map((form, k) => `${k === 0 ? 'Usage: ' : '       '}gpumem ${form.startsWith(spec.name) || k === 0 ? form : `${spec.name} ${form}`}`);
  const lines = [...usage, '', ...wrap(spec.summary + '.', width)];
  if (spec.aliases && spec.aliases.length > 0) lines.push(`Also: ${spec.aliases.map((a) => `gpumem ${a}`).join(', ')}`);
  if (spec.description) lines.push('', ...wrap(spec.description, width));
  const column = (label: string, text: string): string[] =>
    // A label longer than the column gets its text on the next line, so descriptions stay aligned.
    label.length > LABEL_WIDTH
      ? [`  ${label}`, ...wrap(text, width, ' '.repeat(LABEL_WIDTH + 3))]
      : wrap(text, width, `  ${label.padEnd(LABEL_WIDTH)} `);
  if (spec.args && spec.args.length > 0) {
    lines.push('', 'Arguments:');
    for (const a of spec.args) lines.push(...column(a.name, a.description));
  }
  lines.push('', 'Options:');
  for (const o of [...spec.options, ...GLOBAL_OPTIONS]) lines.push(...column(optionLabel(o), optionText(o)));
  if (spec.examples && spec.examples.length > 0) {
    lines.push('', 'Examples:');
    for (const e of spec.examples) lines.push(`  ${e}`);
  }
  if (spec.exits && spec.exits.length > 0) {
    lines.push('', 'Exit status:');
    for (const e of spec.exits) lines.push(...wrap(e, width, '  '));
  }
  return lines.join('\n') + '\n';
}

/** `gpumem --help`. */
export function mainHelp(version: string): string {
  const lines = [
    `gpumem ${version} — where your GPU memory went, why training ran out of it, and what fits.`,
    '',
    'Usage: gpumem [COMMAND] [options]      (no command = doctor)',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(14)} ${c.summary}${c.aliases ? ` (also: ${c.aliases.join(', ')})` : ''}`),
    '',
    'Run `gpumem COMMAND --help` for a command\'s options.',
    `Words from other scripts (${FAMILIAR_WORDS.map((f) => f.words[0]).join(', ')}) answer with the command that does their job.`,
    '',
    'Exit status:',
    ...EXIT_CODE_DOCS.map((e) => `  ${e.code.padEnd(6)} ${e.meaning}`),
  ];
  return lines.join('\n') + '\n';
}

/** The path options of every command, once each, as `--name` in backticks. */
function pathOptionNames(): string {
  const names = new Set(COMMANDS.flatMap((c) => c.options.filter((o) => 'path' in o && o.path).map((o) => `\`--${o.name}\``)));
  return [...names].join(', ');
}

/** docs/cli.md, generated; never edit it by hand. */
export function docsMarkdown(): string {
  const out = [
    '# gpumem command line',
    '',
    '<!-- Generated from src/cli/table.ts by `npm run docs`; do not edit by hand. -->',
    '',
    'Running `gpumem` with no command runs `gpumem doctor`.',
    '',
    `An option whose value is a path (${pathOptionNames()}) does not take a next argument that starts with \`-\` as its value, so \`--html --json\` is refused rather than writing a file named \`--json\`; name such a file as \`--html=-x.html\` or \`--html ./-x.html\`. How files are written (never through a link, never over an input): [output-files.md](output-files.md).`,
    '',
    '## Exit status',
    '',
    '| code | meaning |',
    '|---|---|',
    ...EXIT_CODE_DOCS.map((e) => `| ${e.code} | ${e.meaning} |`),
    '',
    '## Options every command accepts',
    '',
    ...GLOBAL_OPTIONS.map((o) => `- \`${optionLabel(o)}\`: ${optionText(o)}`),
  ];
  out.push(
    '',
    '## Coming from your own scripts',
    '',
    'The words of the scripts gpumem replaces work where they mean the same: ' +
      COMMANDS.filter((c) => c.aliases).map((c) => c.aliases!.map((a) => `\`gpumem ${a}\` (or \`--${a}\`) is \`gpumem ${c.name}\``).join(', ')).join(', ') +
      '. The others answer with the command that does the job and why, on one `error:` line and one `hint:` line, and exit 2:',
    '',
    '| you typed | from | what gpumem says |',
    '|---|---|---|',
    ...FAMILIAR_WORDS.map((f) => `| ${f.words.map((w) => `\`${w}\``).join(', ')} | ${f.from} | ${f.answer}; ${f.hint} |`),
  );
  for (const c of COMMANDS) {
    out.push('', `## gpumem ${c.name}`, '', `\`gpumem ${c.usage}\``, '', c.summary + '.');
    if (c.aliases) out.push('', `Also: ${c.aliases.map((a) => `\`gpumem ${a}\``).join(', ')}.`);
    if (c.description) out.push('', c.description);
    if (c.args && c.args.length > 0) {
      out.push('', '| argument | meaning |', '|---|---|', ...c.args.map((a) => `| \`${a.name}\` | ${a.description} |`));
    }
    if (c.options.length > 0) {
      out.push('', '| option | meaning |', '|---|---|', ...c.options.map((o) => `| \`${optionLabel(o)}\` | ${optionText(o).replace(/\|/g, '\\|')} |`));
    }
    if (c.examples && c.examples.length > 0) out.push('', '```', ...c.examples, '```');
    if (c.exits && c.exits.length > 0) out.push('', ...c.exits.map((e) => `- ${e}`));
  }
  return out.join('\n') + '\n';
}
