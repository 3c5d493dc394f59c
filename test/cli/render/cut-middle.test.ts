/**
 * Long command lines and allocation sites are cut in their middle, not at their end: the end is what says
 * which script runs with which arguments, and where (`file:line (function)`) memory was allocated. Cutting
 * the end used to leave only the interpreter's path in kill and diagnose, and only directories in snapshot.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutCommand, cutMiddle, tableFitted, visibleLength } from '../../../src/cli/render/style.js';
import { renderSnapshotText } from '../../../src/cli/render/snapshot-text.js';
import { reportOf } from '../../core/snapshot/fixtures.js';

const COMMAND = '/home/bob/.conda/envs/nlp/bin/python -m ipykernel_launcher -f /home/bob/.local/share/jupyter/runtime/kernel-5c1f7a.json';

describe('cutMiddle and cutCommand', () => {
  it('leave text that fits alone and cut to exactly the width otherwise', () => {
    expect(cutMiddle('short', 10)).toBe('short');
    for (const width of [1, 2, 10, 37, 80]) {
      expect(Array.from(cutMiddle(COMMAND, width))).toHaveLength(width);
      expect(Array.from(cutCommand(COMMAND, width))).toHaveLength(width);
    }
    expect(cutMiddle(COMMAND, 0)).toBe('');
  });

  it('keep the tail: the file:line (function) of a site, the script and arguments of a command', () => {
    const site = '/home/ana/projects/segmentation/very/deep/package/models/deeplab/decoder.py:57 (forward)';
    expect(cutMiddle(site, 40)).toMatch(/…\S*decoder\.py:57 \(forward\)$/);
    expect(cutCommand(COMMAND, 60)).toMatch(/^…\/python -m ipykernel_launcher -f …|^…\/python .*kernel-5c1f7a\.json$/);
    expect(cutCommand(COMMAND, 60)).toMatch(/kernel-5c1f7a\.json$/);
    expect(cutCommand(COMMAND, 60).startsWith('…/python ')).toBe(true);
    // Characters outside the BMP are never split in half.
    expect(cutMiddle('😀'.repeat(30), 10)).toBe(`${'😀'.repeat(3)}…${'😀'.repeat(6)}`);
  });

  it('tableFitted cuts only the last column, in its middle, and keeps the others whole', () => {
    const rows = [['PID', 'WHY NOT', 'COMMAND'], ['41211', 'a long reason that takes most of the line away from the command', COMMAND]];
    const lines = tableFitted(rows, ['right'], 100, 24);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(lines[1]).toContain('a long reason that takes most of the line away from the command');
    expect(lines[1]).toMatch(/ …\/python .*\.json$/);
  });
});

describe('snapshot text', () => {
  it('a long allocation site keeps its file:line (function) on an 80-column terminal', () => {
    const { report } = reportOf('current-p4');
    const device = report.devices[0]!;
    const long = `/home/ana/projects/${'deep/'.repeat(20)}model.py:57 (forward)`;
    device.sites = device.sites.map((s, i) => (i === 0 ? { ...s, site: long } : s));
    const text = renderSnapshotText(report, 80, false);
    const row = text.split('\n').find((l) => l.includes('…') && l.includes('model.py'));
    expect(row, text).toMatch(/…[^ ]*model\.py:57 \(forward\)$/);
    expect(row!.length).toBeLessThanOrEqual(80);
  });
});

describe('visibleLength', () => {
  /** What it replaces: the colour codes taken out with a regular expression, then counted. */
  const byRegex = (text: string): number => text.replace(/\u001b\[[0-9;]*m/g, '').length;

  it('counts text without colour codes, whatever the codes, near-codes and stray escapes', () => {
    expect(visibleLength('plain')).toBe(5);
    expect(visibleLength('\u001b[31mred\u001b[0m')).toBe(3);
    expect(visibleLength('\u001b[mx\u001b[1;2;33mz')).toBe(2);
    // Not colour codes: an escape alone, a bracket without its m, a letter inside.
    expect(visibleLength('\u001b')).toBe(1);
    expect(visibleLength('\u001b[12')).toBe(4);
    expect(visibleLength('\u001b[1xm')).toBe(5);
    fc.assert(fc.property(fc.array(fc.constantFrom('\u001b', '[', 'm', '1', ';', 'a', ' ', '█'), { maxLength: 40 }), (parts) => {
      const text = parts.join('');
      expect(visibleLength(text)).toBe(byRegex(text));
    }), { numRuns: 3000 });
  });
});
