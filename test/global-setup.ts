/**
 * Runs once before the suite. Builds the native test doubles (the fake libnvidia-ml.so.1) so that a fresh
 * clone needs nothing but `npm ci` and a C compiler. Each builder registers itself in test/setup/.
 */
import { buildAll } from './setup/index.js';

export default async function setup(): Promise<void> {
  await buildAll();
}
