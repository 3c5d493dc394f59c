/** The live view's screen diffing and key handling, without a terminal. */
import { describe, expect, it } from 'vitest';
import { Screen } from '../../../src/cli/watch/screen.js';
import { initialState, KEY, onKey, splitKeys, type WatchState } from '../../../src/cli/watch/state.js';

function recorder(): { out: { write: (t: string) => void }; text: () => string; clear: () => void } {
  let buf = '';
  return { out: { write: (t: string) => void (buf += t) }, text: () => buf, clear: () => void (buf = '') };
}

describe('Screen', () => {
  it('redraws only the lines that changed (only their changed cells), and clears lines that disappeared', () => {
    const r = recorder();
    const screen = new Screen(r.out);
    screen.enter();
    expect(screen.draw(['a', 'b', 'c'])).toBe(3);
    r.clear();
    expect(screen.draw(['a', 'B', 'c'])).toBe(1);
    expect(r.text()).toBe('\u001b[2;1HB');
    expect(screen.draw(['a', 'B'])).toBe(1);
    expect(screen.draw(['a', 'B'])).toBe(0);
    screen.invalidate();
    expect(screen.draw(['a', 'B'])).toBe(2);
  });

  it('restores the terminal once, however often it is asked', () => {
    const r = recorder();
    const screen = new Screen(r.out);
    screen.enter();
    r.clear();
    screen.restore();
    screen.restore();
    expect(r.text()).toBe('\u001b[0m\u001b[?25h\u001b[?1049l');
  });
});

describe('keys', () => {
  it('splits a chunk holding several keys, keeping escape sequences whole', () => {
    expect(splitKeys('/123\r')).toEqual(['/', '1', '2', '3', '\r']);
    expect(splitKeys(`${KEY.down}${KEY.down}k\u001b`)).toEqual([KEY.down, KEY.down, 'k', '\u001b']);
    expect(splitKeys('\u001b[1;5Aq')).toEqual(['\u001b[1;5A', 'q']);
  });

  it('moves the selection through the rows on screen and stops at the ends', () => {
    let s = initialState(false);
    const pids = [30, 10, 20];
    [s] = onKey(s, KEY.down, pids);
    expect(s.selectedPid).toBe(30);
    [s] = onKey(s, KEY.down, pids);
    [s] = onKey(s, KEY.down, pids);
    [s] = onKey(s, KEY.down, pids);
    expect(s.selectedPid).toBe(20);
    [s] = onKey(s, KEY.up, pids);
    expect(s.selectedPid).toBe(10);
  });

  it('collects filter text without control characters, Esc clears it', () => {
    let s = initialState(false);
    for (const k of ['/', 'b', 'o', '\u0007', 'b', KEY.backspace, 'b', KEY.enter]) [s] = onKey(s, k, []);
    expect(s).toMatchObject({ filter: 'bob', editingFilter: false });
    [s] = onKey(s, KEY.escape, []);
    expect(s.filter).toBe('');
  });

  it('asks before ending a process, and never in read-only mode', () => {
    let s: WatchState = { ...initialState(false), selectedPid: 42 };
    let effect;
    [s, effect] = onKey(s, 'K', [42]);
    expect(effect).toBeNull();
    expect(s.confirmKillPid).toBe(42);
    [s, effect] = onKey(s, 'n', [42]);
    expect(effect).toBeNull();
    expect(s.message).toBe('kill cancelled');
    [s] = onKey(s, 'K', [42]);
    [, effect] = onKey(s, 'y', [42]);
    expect(effect).toEqual({ kind: 'kill', pid: 42 });
    const ro = { ...initialState(true), selectedPid: 42 };
    const [after, none] = onKey(ro, 'K', [42]);
    expect(none).toBeNull();
    expect(after.confirmKillPid).toBeNull();
    expect(after.message).toMatch(/read-only/);
  });

  it('cycles sort keys and quits on q and Ctrl-C', () => {
    let s = initialState(false);
    [s] = onKey(s, 's', []);
    expect(s.sort).toBe('pid');
    expect(onKey(s, 'q', [])[1]).toEqual({ kind: 'quit' });
    expect(onKey({ ...s, editingFilter: true }, KEY.ctrlC, [])[1]).toEqual({ kind: 'quit' });
  });
});
