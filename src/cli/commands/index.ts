/** Command name → handler module, loaded lazily so `gpumem explain` never loads koffi or SQLite. */
import type { CommandHandler } from '../context.js';

// The handler's options type is checked where it is declared (CommandHandler<RunOptions>); dispatch by name
// cannot carry it, so the map holds handlers of any options.
type Loader = () => Promise<{ run: CommandHandler<any> }>;

export const HANDLERS: Record<string, Loader> = {
  doctor: () => import('./doctor.js'),
  diagnose: () => import('./diagnose.js'),
  status: () => import('./status.js'),
  watch: () => import('./watch.js'),
  record: () => import('./record.js'),
  run: () => import('./run.js'),
  pipeline: () => import('./pipeline.js'),
  kill: () => import('./kill.js'),
  runs: () => import('./runs.js'),
  serve: () => import('./serve.js'),
  snapshot: () => import('./snapshot.js'),
  explain: () => import('./explain.js'),
  estimate: () => import('./estimate.js'),
  fit: () => import('./fit.js'),
  'python-path': () => import('./python-path.js'),
};
