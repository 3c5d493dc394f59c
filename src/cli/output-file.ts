/**
 * Files the user names on the command line for gpumem to write (`--html OUT`, `record --out FILE`): never
 * through a link, never over another user's file (store/new-file.ts), and never over a file the same
 * command reads. The rules for users are in docs/output-files.md.
 */
import { statSync, lstatSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { GpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';
import { writeNewFile } from '../store/index.js';

/**
 * Writes `text` to `path` (named `shown` in the error, as the user typed it) as a whole new file renamed
 * over any old one. A path that cannot be written is the user's bad input (exit 2), named by `option`; a
 * link or another user's file there is refused (INPUT_UNSAFE, exit 2). Render before calling: only the
 * write is inside the catch, so a rendering fault still shows as a bug.
 */
export function writeUserFile(path: string, text: string, option: string, shown = path): void {
  try {
    writeNewFile(path, text, { label: option, shown });
  } catch (error) {
    if (error instanceof GpumemError || typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
    const code = (error as NodeJS.ErrnoException).code as string;
    throw new GpumemError('BAD_OPTION_VALUE', `${option}: cannot write ${printable(shown)} (${code})`, { hint: `choose a writable path for ${option}`, cause: error });
  }
}

function statOrNull(path: string, follow: boolean): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Refuses an output path that names one of the files this command reads (the snapshot, the recording, the
 * traced script…): writing it would destroy the input, often the one copy of an OOM's evidence. Compared by
 * device and inode, so another spelling, a hard link or a symbolic link to the input is caught too. An
 * output that does not exist yet cannot be an input; inputs that do not exist are skipped (their own
 * reader reports them). Paths are relative to `cwd`. Call before the work starts, so a long trace is not
 * run only to be refused at the end.
 */
export function refuseOutputOverInputs(option: string, output: string, inputs: ReadonlyArray<string | undefined>, cwd: string): void {
  const out = statOrNull(resolve(cwd, output), true);
  if (out === null) return;
  for (const input of inputs) {
    if (input === undefined || input === '' || input === '-') continue;
    const st = statOrNull(resolve(cwd, input), true);
    if (st === null || st.dev !== out.dev || st.ino !== out.ino) continue;
    const same = input === output ? '' : ` (${printable(input)})`;
    throw new GpumemError('BAD_OPTION_VALUE', `${option}: ${printable(output)} is a file this command reads${same}; writing it would destroy it`, {
      hint: `choose another path for ${option}`,
    });
  }
}
