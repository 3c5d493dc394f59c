/** Command name → handler module, loaded lazily so `gpumem explain` never loads koffi or SQLite. */
import type { CommandHandler } from '../context.js';

type Loader = () => Promise<{ run: CommandHandler }>;

export const HANDLERS: Record<string, Loader> = {
  doctor: () => import('./doctor.js'),
  status: () => import('./status.js'),
};
