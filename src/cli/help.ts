/** Renders help text and the docs page from the options table, so both always match the parser. */
import type { CommandSpec, OptionSpec } from './spec.js';
import { COMMANDS, GLOBAL_OPTIONS } from './table.js';
import { EXIT_CODE_DOCS } from './exit-codes.js';

const LABEL_WIDTH = 30;

function optionLabel(o: OptionSpec): string {
  const value = o.type === 'boolean' ? '' : ` ${o.value ?? 'VALUE'}`;
  return `${o.short ? `-${o.short}, ` : ''}--${o.name}${value}`;
}

function optionText(o: OptionSpec): string {
  const extra = [
    o.choices ? `one of: ${o.choices.join(', ')}` : '',
    o.default !== undefined ? `default: ${String(o.default)}` : '',
    o.type === 'list' ? 'repeatable, comma-separated' : o.type === 'repeat' ? 'repeatable' : '',
  ].filter((s) => s !== '');
  return extra.length > 0 ? `${o.description} (${extra.join('; ')})` : o.description;
}

/** `gpumem CMD --help`. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: gpumem ${spec.usage}`, '', spec.summary + '.'];
  if (spec.description) lines.push('', spec.description);
  if (spec.args && spec.args.length > 0) {
    lines.push('', 'Arguments:');
    for (const a of spec.args) lines.push(`  ${a.name.padEnd(LABEL_WIDTH)} ${a.description}`);
  }
  const opts = [...spec.options, ...GLOBAL_OPTIONS];
  lines.push('', 'Options:');
  // A label longer than the column gets its text on the next line, so descriptions stay aligned.
  for (const o of opts) {
    const label = optionLabel(o);
    if (label.length > LABEL_WIDTH) lines.push(`  ${label}`, `  ${''.padEnd(LABEL_WIDTH)} ${optionText(o)}`);
    else lines.push(`  ${label.padEnd(LABEL_WIDTH)} ${optionText(o)}`);
  }
  if (spec.examples && spec.examples.length > 0) {
    lines.push('', 'Examples:');
    for (const e of spec.examples) lines.push(`  ${e}`);
  }
  if (spec.exits && spec.exits.length > 0) {
    lines.push('', 'Exit status:');
    for (const e of spec.exits) lines.push(`  ${e}`);
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
    ...COMMANDS.map((c) => `  ${c.name.padEnd(14)} ${c.summary}`),
    '',
    'Run `gpumem COMMAND --help` for a command\'s options.',
    '',
    'Exit status:',
    ...EXIT_CODE_DOCS.map((e) => `  ${e.code.padEnd(6)} ${e.meaning}`),
  ];
  return lines.join('\n') + '\n';
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
  for (const c of COMMANDS) {
    out.push('', `## gpumem ${c.name}`, '', `\`gpumem ${c.usage}\``, '', c.summary + '.');
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
