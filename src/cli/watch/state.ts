/**
 * What the person has asked the live view for (sort, filter, selection, open panels) and how each key
 * changes it. Pure: a key in, the next state and at most one effect out; the command carries effects out.
 */

export type SortKey = 'memory' | 'pid' | 'user' | 'gpu';
export const SORT_KEYS: readonly SortKey[] = ['memory', 'pid', 'user', 'gpu'];

export interface WatchState {
  sort: SortKey;
  filter: string;
  /** True while `/` is collecting filter text. */
  editingFilter: boolean;
  /** Pid of the highlighted process row (kept across samples by pid, not by position). */
  selectedPid: number | null;
  /** The process whose history is open (Enter), or null. */
  detailPid: number | null;
  help: boolean;
  /** A kill waiting for y/n. */
  confirmKillPid: number | null;
  message: string | null;
  paused: boolean;
  speed: number;
  readonly: boolean;
}

export type Effect = { kind: 'quit' } | { kind: 'kill'; pid: number } | { kind: 'pause'; paused: boolean } | { kind: 'speed'; speed: number } | { kind: 'seek'; samples: number } | null;

/** Samples a replay jumps per ← / → press. */
export const SEEK_SAMPLES = 10;

export function initialState(readonly: boolean, speed = 1): WatchState {
  return { sort: 'memory', filter: '', editingFilter: false, selectedPid: null, detailPid: null, help: false, confirmKillPid: null, message: null, paused: false, speed, readonly };
}

/** Keys as the terminal sends them in raw mode. */
export const KEY = { up: '\u001b[A', down: '\u001b[B', right: '\u001b[C', left: '\u001b[D', enter: '\r', escape: '\u001b', ctrlC: '\u0003', backspace: '\u007f' } as const;

function move(state: WatchState, pids: readonly number[], step: number): WatchState {
  if (pids.length === 0) return { ...state, selectedPid: null };
  const at = state.selectedPid === null ? -1 : pids.indexOf(state.selectedPid);
  const next = Math.min(pids.length - 1, Math.max(0, at + step));
  return { ...state, selectedPid: pids[next] ?? null };
}

/**
 * Applies one key. `pids` are the process rows in the order shown, so arrows move through what is on
 * screen. Returns the new state and the effect the command must carry out.
 */
export function onKey(state: WatchState, key: string, pids: readonly number[]): [WatchState, Effect] {
  const s = { ...state, message: null };
  if (key === KEY.ctrlC) return [s, { kind: 'quit' }];
  if (state.editingFilter) {
    if (key === KEY.enter) return [{ ...s, editingFilter: false }, null];
    if (key === KEY.escape) return [{ ...s, editingFilter: false, filter: '' }, null];
    if (key === KEY.backspace || key === '\b') return [{ ...s, filter: s.filter.slice(0, -1) }, null];
    // Printable characters only: a pasted escape sequence must not end up in the filter.
    const text = [...key].filter((c) => c >= ' ' && c !== '\u007f').join('');
    return [{ ...s, filter: (s.filter + text).slice(0, 80) }, null];
  }
  if (state.confirmKillPid !== null) {
    if (key === 'y' || key === 'Y') return [{ ...s, confirmKillPid: null }, { kind: 'kill', pid: state.confirmKillPid }];
    return [{ ...s, confirmKillPid: null, message: 'kill cancelled' }, null];
  }
  if (state.help) return [{ ...s, help: false }, key === 'q' ? { kind: 'quit' } : null];
  switch (key) {
    case 'q': return [s, { kind: 'quit' }];
    case '?': return [{ ...s, help: true }, null];
    case '/': return [{ ...s, editingFilter: true }, null];
    case KEY.escape: return [{ ...s, detailPid: null, filter: state.detailPid === null ? '' : state.filter }, null];
    case KEY.up: case 'k': return [move(s, pids, -1), null];
    case KEY.down: case 'j': return [move(s, pids, 1), null];
    case KEY.enter: return [{ ...s, detailPid: state.detailPid === null ? state.selectedPid : null }, null];
    case 's': return [{ ...s, sort: SORT_KEYS[(SORT_KEYS.indexOf(state.sort) + 1) % SORT_KEYS.length] as SortKey }, null];
    case 'm': return [{ ...s, sort: 'memory' }, null];
    case 'p': return [{ ...s, sort: 'pid' }, null];
    case 'u': return [{ ...s, sort: 'user' }, null];
    case 'g': return [{ ...s, sort: 'gpu' }, null];
    case ' ': return [{ ...s, paused: !state.paused }, { kind: 'pause', paused: !state.paused }];
    case KEY.left: return [s, { kind: 'seek', samples: -SEEK_SAMPLES }];
    case KEY.right: return [s, { kind: 'seek', samples: SEEK_SAMPLES }];
    case '+': { const speed = Math.min(64, state.speed * 2); return [{ ...s, speed }, { kind: 'speed', speed }]; }
    case '-': { const speed = Math.max(1 / 16, state.speed / 2); return [{ ...s, speed }, { kind: 'speed', speed }]; }
    case 'K': {
      if (state.readonly) return [{ ...s, message: 'read-only: actions are off (--readonly)' }, null];
      if (state.selectedPid === null) return [{ ...s, message: 'select a process first (↑/↓)' }, null];
      return [{ ...s, confirmKillPid: state.selectedPid }, null];
    }
    default: return [s, null];
  }
}

export const HELP_LINES: readonly string[] = [
  'keys',
  '  ↑/↓ j/k   select a process          Enter   its memory history (again: back)',
  '  s         next sort key             m p u g sort by memory, pid, user, GPU',
  '  /         filter (Enter keeps, Esc clears)',
  '  K         end the selected process (asks y/n; same checks as gpumem kill)',
  '  space     pause   + / -  replay speed   ← / →  replay: back / ahead 10 samples',
  '  q         quit    ?  this help (any key closes)',
];

/**
 * Splits one chunk of raw terminal input into keys: a terminal (or tmux, or a paste) may deliver several
 * keys at once. CSI sequences (`ESC [ … final`) and `ESC O x` stay whole; a lone ESC is the Escape key.
 */
export function splitKeys(chunk: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < chunk.length) {
    if (chunk[i] === '\u001b' && chunk[i + 1] === '[') {
      let j = i + 2;
      while (j < chunk.length && !/[@-~]/.test(chunk[j] as string)) j++;
      keys.push(chunk.slice(i, j + 1));
      i = j + 1;
    } else if (chunk[i] === '\u001b' && chunk[i + 1] === 'O' && i + 2 < chunk.length) {
      keys.push(chunk.slice(i, i + 3));
      i += 3;
    } else {
      const c = String.fromCodePoint(chunk.codePointAt(i) as number);
      keys.push(c);
      i += c.length;
    }
  }
  return keys;
}
