/**
 * The watch screen writes only the cells that changed. Checked on what a terminal would show: a small terminal
 * model (cursor moves, SGR attributes by their meaning, erase to end of line, clear screen) takes the bytes the
 * Screen wrote; the incrementally updated screen must equal a fresh full redraw of the same frame, cell by cell
 * with its attributes, and the bytes for one moved number must be a small share of a full redraw.
 */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../../src/core/diagnose/index.js';
import type { GpuProcess, Sample } from '../../../src/core/index.js';
import { orderRows } from '../../../src/cli/watch/process-panel.js';
import { compareSamples } from '../../../src/core/watch/index.js';
import { Screen } from '../../../src/cli/watch/screen.js';
import { initialState } from '../../../src/cli/watch/state.js';
import { renderFrame } from '../../../src/cli/watch/view.js';
import { device, GiB, proc, sample } from '../../core/diagnose/build.js';

interface Attrs {
  bold: boolean;
  dim: boolean;
  inverse: boolean;
  fg: number | null;
  bg: number | null;
}
const PLAIN: Attrs = { bold: false, dim: false, inverse: false, fg: null, bg: null };

/** A terminal of `rows` × `cols` cells fed raw output; snapshot() is every cell as "char|attributes". */
function terminal(rows: number, cols: number) {
  const blank = () => ({ ch: ' ', a: { ...PLAIN } });
  let grid = Array.from({ length: rows }, () => Array.from({ length: cols }, blank));
  let [r, c] = [0, 0];
  let a: Attrs = { ...PLAIN };
  const sgr = (params: string): void => {
    for (const p of (params === '' ? '0' : params).split(';').map(Number)) {
      if (p === 0) a = { ...PLAIN };
      else if (p === 1) a = { ...a, bold: true };
      else if (p === 2) a = { ...a, dim: true };
      else if (p === 22) a = { ...a, bold: false, dim: false };
      else if (p === 7) a = { ...a, inverse: true };
      else if (p === 27) a = { ...a, inverse: false };
      else if ((p >= 30 && p <= 37) || (p >= 90 && p <= 97)) a = { ...a, fg: p };
      else if (p === 39) a = { ...a, fg: null };
      else if (p >= 40 && p <= 47) a = { ...a, bg: p };
      else if (p === 49) a = { ...a, bg: null };
      else throw new Error(`SGR ${p} not modelled`);
    }
  };
  const feed = (text: string): void => {
    for (let i = 0; i < text.length; ) {
      if (text[i] === '\u001b') {
        const m = /^\u001b\[(\??)([0-9;]*)([A-Za-z])/.exec(text.slice(i, i + 32));
        if (!m) throw new Error(`escape not modelled at ${JSON.stringify(text.slice(i, i + 10))}`);
        const [whole, priv, params, op] = m as unknown as [string, string, string, string];
        i += whole.length;
        if (priv === '?') continue; // alternate screen, cursor visibility: no cells change
        if (op === 'm') sgr(params);
        else if (op === 'H') {
          const [row, col] = params === '' ? [1, 1] : params.split(';').map(Number);
          [r, c] = [(row ?? 1) - 1, (col ?? 1) - 1];
        } else if (op === 'K') for (let k = c; k < cols; k++) grid[r]![k] = { ch: ' ', a: { ...PLAIN, bg: a.bg } };
        else if (op === 'J' && params === '2') grid = Array.from({ length: rows }, () => Array.from({ length: cols }, blank));
        else throw new Error(`CSI ${op} not modelled`);
        continue;
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      i += ch.length;
      if (c < cols) grid[r]![c] = { ch, a: { ...a } };
      c++;
    }
  };
  const snapshot = (): string[] => grid.map((line) => line.map((cell) => `${cell.ch}|${JSON.stringify(cell.a)}`).join(' '));
  const text = (): string[] => grid.map((line) => line.map((cell) => cell.ch).join('').trimEnd());
  return { feed, snapshot, text };
}

function recorder() {
  let all = '';
  let mark = 0;
  return {
    out: { write: (t: string) => (all += t) },
    all: () => all,
    /** Bytes written since the last call. */
    since: () => {
      const part = all.slice(mark);
      mark = all.length;
      return Buffer.byteLength(part);
    },
  };
}

const COLS = 160;
const ROWS = 50;

/** 8 GPUs × 8 processes; `bump` moves one process's SM % (a number that moves every few seconds in training). */
function fleet(bump: number): Sample {
  const devices = Array.from({ length: 8 }, (_, g) => device(g, 8 * 2 * GiB, { utilPct: 50 + g }));
  const processes: GpuProcess[] = [];
  for (let g = 0; g < 8; g++) for (let i = 0; i < 8; i++) {
    const pid = 1000 + g * 8 + i;
    processes.push(proc(pid, g, 2 * GiB, { ppid: 1, smUtilPct: (g * 8 + i + (g === 1 && i === 2 ? bump : 0)) % 100, cmd: ['python', 'train.py', `--rank=${g * 8 + i}`], startTimeMs: 1_000_000 }));
  }
  return sample(5_000_000, devices, processes);
}

const reportOf = (s: Sample) => diagnose({ samples: [s], viewer: { uid: 1000, user: 'alice' }, pidNamespace: 'host', ancestors: {} }, []);

/** The frame of `s`, drawn with the report of `reportFrom` (default: its own). */
function frameOf(s: Sample, reportFrom: Sample = s): string[] {
  const report = reportOf(reportFrom);
  const state = initialState(false);
  return renderFrame({ sample: s, history: [s], report, rows: orderRows(report, state), viewerUid: 1000, state: { ...state, selectedPid: 1000 }, columns: COLS, height: ROWS, color: true });
}

describe('watch screen: cell-level redraw', () => {
  it('one number moving writes a small share of a full redraw, and the screen equals a full redraw of the new frame', () => {
    const [a, b] = [frameOf(fleet(0)), frameOf(fleet(47))];
    const changedLines = b.filter((line, i) => line !== a[i]);
    expect(changedLines.length).toBeGreaterThan(0);
    const inc = recorder();
    const screen = new Screen(inc.out);
    screen.enter();
    screen.draw(a);
    const fullBytes = inc.since();
    expect(screen.draw(b)).toBe(changedLines.length);
    const patchBytes = inc.since();
    // Against the whole screen, and against rewriting each changed line whole (what a line diff writes).
    const wholeLines = changedLines.reduce((sum, line) => sum + Buffer.byteLength(line) + 12, 0);
    expect(patchBytes).toBeLessThan(fullBytes * 0.02);
    expect(patchBytes).toBeLessThan(wholeLines / 4);

    const fresh = recorder();
    const other = new Screen(fresh.out);
    other.enter();
    other.draw(b);
    const [t1, t2] = [terminal(ROWS, COLS), terminal(ROWS, COLS)];
    t1.feed(inc.all());
    t2.feed(fresh.all());
    expect(t2.text().some((l) => l.includes('--rank='))).toBe(true);
    expect(t1.snapshot()).toEqual(t2.snapshot());
  });

  it('random edits (characters, colours, inverse, shorter and longer lines, lines gone) leave the screen a full redraw would', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const colors = ['', '\u001b[31m', '\u001b[2m', '\u001b[7m', '\u001b[1m\u001b[36m', '\u001b[90m'];
    const word = (): string => {
      const color = colors[rand(colors.length)]!;
      const text = 'abc 123 GiB ▂▅█ …'.slice(rand(8), 8 + rand(10));
      return color === '' ? text : `${color}${text}\u001b[${color === '\u001b[7m' ? '27' : '0'}m`;
    };
    const line = (): string => Array.from({ length: rand(8) }, word).join(rand(2) ? ' ' : '');
    let frame = Array.from({ length: 20 }, line);
    const inc = recorder();
    const screen = new Screen(inc.out);
    screen.enter();
    screen.draw(frame);
    let patched = 0;
    for (let step = 0; step < 300; step++) {
      frame = [...frame];
      for (let k = rand(4); k >= 0; k--) frame[rand(frame.length)] = rand(3) === 0 ? line() : frame[rand(frame.length)]!.replace(/[0-9a]/, String(rand(10)));
      if (rand(10) === 0) frame = frame.slice(0, 10 + rand(10));
      if (rand(10) === 0) frame = [...frame, line()];
      screen.draw(frame);
      const fresh = recorder();
      const other = new Screen(fresh.out);
      other.enter();
      other.draw(frame);
      const [t1, t2] = [terminal(24, 200), terminal(24, 200)];
      t1.feed(inc.all());
      t2.feed(fresh.all());
      expect(t1.snapshot(), `step ${step}`).toEqual(t2.snapshot());
      patched++;
    }
    expect(patched).toBe(300);
  });

  it('the comparison can fail: a patch that leaves one stale cell is caught', () => {
    const [a, b] = [frameOf(fleet(0)), frameOf(fleet(47))];
    const full = recorder();
    const s1 = new Screen(full.out);
    s1.enter();
    s1.draw(b);
    const stale = recorder();
    const s2 = new Screen(stale.out);
    s2.enter();
    s2.draw(a);
    const [t1, t2] = [terminal(ROWS, COLS), terminal(ROWS, COLS)];
    t1.feed(full.all());
    t2.feed(stale.all());
    expect(t1.snapshot()).not.toEqual(t2.snapshot());
  });
});

describe('watch: a moved number that no view, tree or bar depends on', () => {
  it('is "numbers" and the frame drawn with the previous report equals the one drawn with a new report', () => {
    const before = fleet(0);
    const moved = fleet(47);
    moved.devices[1] = { ...moved.devices[1]!, utilization: { ...moved.devices[1]!.utilization, gpuPct: 3 } };
    expect(compareSamples(before, moved, new Set())).toBe('numbers');
    const reused = frameOf(moved, before);
    expect(reused).toEqual(frameOf(moved));
    // And it shows the new numbers, not the old ones.
    expect(reused).not.toEqual(frameOf(before));
    expect(reused.some((line) => / 1010 .* 57% /.test(line))).toBe(true);
  });
});
