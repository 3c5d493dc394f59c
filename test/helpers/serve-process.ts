/** A `gpumem serve` child process seen from a test: its address once it prints it, and its stderr so far. */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

export interface ServedChild {
  /** http://127.0.0.1:PORT, once serve has printed the address it listens on. */
  base: Promise<string>;
  stderr: () => string;
}

/** Watches `child` (spawned with piped streams); `base` rejects with its stderr when it exits first. */
export function watchServe(child: ChildProcessWithoutNullStreams, what = 'serve'): ServedChild {
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const base = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = /http:\/\/[\d.]+:(\d+)\//.exec(stdout);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited ${code}: ${stderr}`)));
  });
  return { base, stderr: () => stderr };
}
