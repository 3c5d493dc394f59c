/** `gpumem python-path`: where the Python companion ships, for PYTHONPATH. */
import { pythonPathDocument } from '../../core/documents/python-path.js';
import { companionPythonDir, companionSiteDir } from '../../supervise/companion/index.js';
import type { CommandHandler } from '../context.js';
import type { PythonPathOptions } from '../options/files.js';

export const run: CommandHandler<PythonPathOptions> = async (ctx) => {
  const pythonPath = companionPythonDir();
  const sitePath = companionSiteDir();
  if (ctx.args.options.json) {
    ctx.stdout.write(`${JSON.stringify(pythonPathDocument(pythonPath, sitePath), null, 2)}\n`);
  } else {
    ctx.stdout.write(`${ctx.args.options.site ? sitePath : pythonPath}\n`);
  }
  return { kind: 'ok' };
};
