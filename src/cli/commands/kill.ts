import { GpumemError } from '../../core/index.js';
import type { CommandHandler } from '../context.js';

export const run: CommandHandler = async () => {
  throw new GpumemError('FAILED', 'gpumem kill is not built yet');
};
