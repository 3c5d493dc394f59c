/**
 * Human report of `gpumem explain`: per event, where it was, the numbers the message printed (exact, in
 * the one size format), the user's frame, and the ranked causes with their fixes.
 */
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { Cause, OomEvent } from '../../core/oom/types.js';
import { painter } from './style.js';

export interface ExplainedEvent {
  file: string;
  event: OomEvent;
  causes: Cause[];
}

function ranks(list: readonly number[]): string {
  if (list.length === 0) return '';
  const sorted = [...list].sort((a, b) => a - b);
  const contiguous = sorted.every((r, i) => i === 0 || r === (sorted[i - 1] as number) + 1);
  return contiguous && sorted.length > 2 ? `ranks ${sorted[0]}–${sorted[sorted.length - 1]}` : `rank${sorted.length > 1 ? 's' : ''} ${sorted.join(',')}`;
}

function numbers(e: OomEvent): string[] {
  const lines: string[] = [];
  const pairs: Array<[string, bigint | null]> = [
    ['requested', e.requestedBytes],
    ['free', e.freeBytes],
    ['total', e.totalBytes],
    ['allowed', e.allowedBytes],
  ];
  const first = pairs.filter(([, v]) => v !== null).map(([k, v]) => `${k} ${formatBytes(v)}`);
  if (e.requestMoreThan1EB) first.unshift('requested more than 1 EB');
  if (first.length > 0) lines.push(first.join(' · '));
  const held: Array<[string, bigint | null]> = [
    ['this process', e.processInUseBytes],
    ['allocated by PyTorch', e.allocatedByPytorchBytes],
    ['private pools', e.privatePoolBytes],
    ['reserved-unallocated', e.reservedUnallocatedBytes],
    ['reserved in total', e.reservedTotalBytes],
  ];
  const second = held.filter(([, v]) => v !== null).map(([k, v]) => `${k} ${formatBytes(v)}`);
  if (second.length > 0) lines.push(second.join(' · '));
  for (const [field, why] of Object.entries(e.unavailable)) lines.push(`${field}: n/a (${printable(why)})`);
  if (e.otherProcesses.length > 0) {
    lines.push(`other processes: ${e.otherProcesses.map((p) => `${p.pid ?? 'pid not shown'} (${formatBytes(p.bytes)})`).join(', ')}`);
  }
  if (e.mps) {
    lines.push(`MPS allocated ${formatBytes(e.mps.mpsAllocatedBytes)} · other allocations ${formatBytes(e.mps.otherAllocationsBytes)}${e.mps.pool ? ` · ${printable(e.mps.pool)} pool` : ''}`);
  }
  if (e.poolBytes !== null || e.backend !== null) {
    lines.push([e.poolBytes !== null ? `held by the framework's pool ${formatBytes(e.poolBytes)}` : '', e.backend !== null ? `buffer/call ${printable(e.backend)}` : ''].filter((x) => x !== '').join(' · '));
  }
  const kv = e.kvCache;
  if (kv) {
    const parts = [
      kv.maxModelLenTokens !== null ? `max_model_len ${kv.maxModelLenTokens}` : '',
      kv.cacheTokens !== null ? `KV cache holds ${kv.cacheTokens} tokens` : '',
      kv.neededBytes !== null ? `KV cache needed ${formatBytes(kv.neededBytes)}` : '',
      kv.availableBytes !== null ? `available ${formatBytes(kv.availableBytes)}` : '',
      kv.estimatedMaxModelLenTokens !== null ? `fits ${kv.estimatedMaxModelLenTokens} tokens` : '',
    ];
    lines.push(parts.filter((x) => x !== '').join(' · '));
  }
  if (e.partial) lines.push('(a piece of the message: the numbers shown are exact, the rest was cut off)');
  if (e.tensor) {
    lines.push(`tensor shape [${e.tensor.shape.join(', ')}] ${printable(e.tensor.dtype)}${e.tensor.bytes !== null ? ` = ${formatBytes(e.tensor.bytes)} (shape × element size)` : ''}`);
  }
  return lines;
}

/** The report for all events (empty input → one line saying no OOM was found). */
export function renderExplain(items: readonly ExplainedEvent[], options: { color: boolean; snapshots: readonly string[] }): string {
  const paint = painter(options.color);
  const out: string[] = [];
  if (items.length === 0) out.push(paint('green', 'No out-of-memory error found.'));
  items.forEach((item, i) => {
    const e = item.event;
    const where = `${printable(item.file)}:${e.line}${e.lines.length > 1 ? ` (${e.lines.length}×${e.ranks.length > 0 ? `, ${ranks(e.ranks)}` : ''})` : e.ranks.length > 0 ? ` (${ranks(e.ranks)})` : ''}`;
    const era = e.era ? ` · ${/^\d/.test(e.era.version) ? 'v' : ''}${printable(e.era.version)} (${printable(e.era.evidence)})` : '';
    out.push(paint('bold', `OOM ${i + 1}/${items.length}  ${where}  ${e.family}${e.gpuIndex !== null ? ` · GPU ${e.gpuIndex}` : ''}${era}`));
    for (const line of numbers(e)) out.push(`  ${line}`);
    if (e.userFrame) out.push(`  your code: ${printable(e.userFrame.file)}:${e.userFrame.line} in ${printable(e.userFrame.function)}`);
    if (item.causes.length === 0) out.push(paint('dim', '  (the message carries no numbers to explain)'));
    item.causes.forEach((c, k) => {
      out.push(`  ${paint('yellow', `${k + 1}. ${printable(c.title)}`)}`);
      out.push(`     ${printable(c.detail)}`);
      out.push(`     ${paint('green', 'fix:')} ${printable(c.fix)}`);
    });
    out.push('');
  });
  for (const snap of options.snapshots) {
    const file = printable(snap);
    out.push(`A memory snapshot sits next to the log: run \`gpumem snapshot ${file}\` to see what held the memory, and \`gpumem snapshot ${file} --what-if 'expandable_segments:True'\` to replay it through the allocator simulation and see whether other allocator settings would have avoided the OOM.`);
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
