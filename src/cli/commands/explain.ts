/**
 * `gpumem explain [FILE…|-]`: finds every OOM in logs, reads its exact numbers and ranks its causes.
 * GPU-free by default; `--live` adds the machine's current GPU processes (to cross-check the pids a
 * message names) and this shell's allocator environment. Exit 0 when no OOM is found, 1 when one is.
 */
import { appendAll } from '../../core/arrays.js';
import { closeSync, fstatSync } from 'node:fs';
import { createOomByteScanner } from '../../core/oom/byte-scanner.js';
import { explainOom } from '../../core/oom/explain.js';
import { GpumemError } from '../../core/errors.js';
import { printable } from '../../core/text.js';
import { eventToJson as oomEventToJson, explainDocument, explainEventDocument } from '../../core/documents/explain.js';
import type { OomContext, OomEvent } from '../../core/oom/types.js';
import type { CommandContext, CommandHandler } from '../context.js';
import type { ExplainOptions } from '../options/files.js';
import { untilInterrupted } from '../interrupt.js';
import { renderExplain, type ExplainedEvent } from '../render/explain.js';
import { expandInputs, openInput, readRange, readWhole, snapshotsNear } from './explain-input.js';

const FOLLOW_POLL_MS = 250;

async function liveContext(ctx: CommandContext<ExplainOptions>): Promise<OomContext> {
  const o = ctx.args.options;
  const context: OomContext = {};
  const conf = o.allocConf !== undefined ? o.allocConf : o.live ? (ctx.env.PYTORCH_CUDA_ALLOC_CONF ?? ctx.env.PYTORCH_ALLOC_CONF) : undefined;
  const visible = o.visibleDevices !== undefined ? o.visibleDevices : o.live ? ctx.env.CUDA_VISIBLE_DEVICES : undefined;
  if (conf !== undefined) context.allocConf = conf;
  if (visible !== undefined) context.cudaVisibleDevices = visible;
  if (!o.live) return context;
  try {
    // Loaded only with --live, so plain explain never touches a GPU library.
    const { openSourceFromContext } = await import('../open-source.js');
    const source = await openSourceFromContext(ctx);
    try {
      const sample = await source.readSample();
      context.liveChecked = true;
      context.liveProcesses = sample.processes.map((p) => ({
        pid: p.pid,
        usedBytes: p.usedBytes,
        user: p.host?.user ?? null,
        state: p.host?.state ?? null,
        cmdline: p.host?.cmdline ?? null,
      }));
    } finally {
      source.close();
    }
  } catch (error) {
    ctx.stderr.write(`gpumem: --live: GPU state not available (${error instanceof Error ? error.message : String(error)}); explaining from the log alone\n`);
  }
  return context;
}

/** What a file that is not a log is, from its first bytes: a gpumem recording or a pickled memory snapshot. */
function notALog(head: Buffer): { what: string; use: string } | null {
  const text = head.toString('latin1');
  if (/^\s*\{\s*"format"\s*:\s*"gpumem-recording"/.test(text)) return { what: 'a gpumem recording', use: 'it holds GPU samples (read it with gpumem doctor --replay FILE)' };
  // Pickle protocol 2 and later start with PROTO (0x80) and the protocol number.
  if (head[0] === 0x80 && (head[1] ?? 0) >= 2 && (head[1] ?? 0) <= 5) return { what: 'a pickle (a PyTorch memory snapshot?)', use: 'read it with gpumem snapshot FILE' };
  return null;
}

function explained(file: string, events: readonly OomEvent[], context: OomContext): ExplainedEvent[] {
  return events.map((event) => ({ file, event, causes: explainOom(event, context) }));
}

async function readStdin(ctx: CommandContext, onBytes: (bytes: Buffer) => void): Promise<void> {
  for await (const chunk of ctx.stdin) onBytes(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
}

async function follow(ctx: CommandContext<ExplainOptions>, path: string, context: OomContext): Promise<number> {
  const input = openInput(path, ctx.cwd);
  const fd = input.fd;
  if (input.fifo) {
    closeSync(fd);
    throw new GpumemError('USAGE', `${path} is a FIFO: --follow watches a growing regular file`, { hint: `read the stream without --follow: gpumem explain ${path}` });
  }
  let scanner = createOomByteScanner();
  let found = 0;
  const emit = (events: OomEvent[]): void => {
    for (const item of explained(path, events, context)) {
      found++;
      ctx.stdout.write(ctx.args.options.json
        ? `${JSON.stringify(explainEventDocument(oomEventToJson(item.event, item.causes, path)))}\n`
        : renderExplain([item], { color: ctx.color, snapshots: [] }));
    }
  };
  try {
    await untilInterrupted(async (stopped) => {
      // The first read happens under the interrupt handler too: a Ctrl-C right after the first report
      // must end the follow cleanly (status 1 for the OOM found), not kill the process by the signal.
      let pos = readRange(input, 0, (bytes) => emit(scanner.push(bytes)));
      emit(scanner.flush());
      while (!stopped()) {
        await stopped.sleep(FOLLOW_POLL_MS);
        const size = fstatSync(fd).size;
        if (size < pos) {
          // Truncated or replaced in place (log rotation with copytruncate): finish the old text and start a
          // new scanner, so the new file's first bytes are not glued to the old last line and lines count from 1.
          emit(scanner.end());
          scanner = createOomByteScanner();
          pos = 0;
        }
        if (size === pos) {
          emit(scanner.flush());
          continue;
        }
        pos = readRange(input, pos, (bytes) => emit(scanner.push(bytes)));
      }
    });
    emit(scanner.end());
  } finally {
    closeSync(fd);
  }
  return found;
}

export const run: CommandHandler<ExplainOptions> = async (ctx) => {
  const o = ctx.args.options;
  const inputs = expandInputs(ctx.args.positionals.length > 0 ? ctx.args.positionals : ['-'], ctx.cwd);
  const context = await liveContext(ctx);
  if (o.follow) {
    if (inputs.length !== 1 || inputs[0] === '-') {
      throw new GpumemError('USAGE', '--follow needs exactly one file', { hint: 'gpumem explain --follow train.log' });
    }
    return (await follow(ctx, inputs[0] as string, context)) > 0 ? { kind: 'findings' } : { kind: 'ok' };
  }
  const items: ExplainedEvent[] = [];
  for (const input of inputs) {
    const scanner = createOomByteScanner();
    const events: OomEvent[] = [];
    let head: Buffer | null = null;
    const onBytes = (bytes: Buffer): void => {
      head ??= bytes.subarray(0, 64);
      appendAll(events, scanner.push(bytes));
    };
    if (input === '-') await readStdin(ctx, onBytes);
    else readWhole(input, ctx.cwd, onBytes);
    appendAll(events, scanner.end());
    const kind = head === null ? null : notALog(head);
    // A file of another kind holds no OOM message: say what it is and what reads it, not just "none found".
    if (kind) ctx.stderr.write(`gpumem: ${printable(input === '-' ? '<stdin>' : input)} is ${kind.what}, not a log: ${kind.use}\n`);
    appendAll(items, explained(input === '-' ? '<stdin>' : input, events, context));
  }
  const snapshots = [...new Set(inputs.flatMap((i) => snapshotsNear(i, ctx.cwd)))];
  if (o.json) {
    const json = explainDocument(
      inputs.map((i) => (i === '-' ? '<stdin>' : i)),
      snapshots,
      items.map((item) => oomEventToJson(item.event, item.causes, item.file)),
    );
    ctx.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    ctx.stdout.write(renderExplain(items, { color: ctx.color, snapshots }));
  }
  return items.length > 0 ? { kind: 'findings' } : { kind: 'ok' };
};
