/** Writing a file the user named on the command line (`--html OUT`). */
import { writeFileSync } from 'node:fs';
import { GpumemError } from '../core/errors.js';

/**
 * Writes `text` to `path` (named `shown` in the error, as the user typed it); a path that cannot be written is the user's bad input (exit 2), named by `option`.
 * Render before calling: only the write is inside the catch, so a rendering fault still shows as a bug.
 */
export function writeUserFile(path: string, text: string, option: string, shown = path): void {
  try {
    writeFileSync(path, text);
  } catch (error) {
    if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
    const code = (error as NodeJS.ErrnoException).code as string;
    throw new GpumemError('BAD_OPTION_VALUE', `${option}: cannot write ${shown} (${code})`, { hint: `choose a writable path for ${option}`, cause: error });
  }
}
