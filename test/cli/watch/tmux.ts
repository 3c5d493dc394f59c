/**
 * Drives `gpumem watch` in a real terminal: a private tmux server (its own socket), keys sent with send-keys,
 * the screen read with capture-pane. Every wait is bounded.
 */
import { spawnSync } from 'node:child_process';

export interface TmuxPane {
  send(...keys: string[]): void;
  screen(): string;
  /** Polls the screen until `test` holds; throws with the last screen after `timeoutMs`. */
  waitFor(test: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  format(spec: string): string;
  resize(columns: number, rows: number): void;
  kill(): void;
}

/** Starts `command` (a shell line) in a detached pane of `columns`×`rows` with `env`. */
export function startTmux(command: string, env: Record<string, string>, columns: number, rows: number): TmuxPane {
  const socket = `gpumem-watch-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...args: string[]): string => {
    const r = spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 10_000 });
    if (r.status !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  };
  tmux('new-session', '-d', '-s', 'w', '-x', String(columns), '-y', String(rows), command);
  const pane = {
    send: (...keys: string[]) => void tmux('send-keys', '-t', 'w', ...keys),
    screen: () => tmux('capture-pane', '-p', '-t', 'w'),
    format: (spec: string) => tmux('display-message', '-p', '-t', 'w', spec).trim(),
    resize: (c: number, r: number) => void tmux('resize-window', '-t', 'w', '-x', String(c), '-y', String(r)),
    kill: () => {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { timeout: 5000 });
    },
    async waitFor(test: (screen: string) => boolean, what: string, timeoutMs = 8000): Promise<string> {
      const until = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < until) {
        last = pane.screen();
        if (test(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
    },
  };
  return pane;
}

/** The screen line of process `pid` (its row starts with the pid, after the selection mark). */
export function rowOf(screen: string, pid: number): string | undefined {
  return screen.split('\n').find((l) => new RegExp(`^[> ]\\s*${pid}\\s`).test(l));
}
