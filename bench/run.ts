/**
 * `npm run bench`: runs every bench/*.bench.ts in turn. Each prints its own measurements and the ratio
 * against the peer it names, measured in the same run. Benchmarks are never timed tests.
 * `npm run bench -- explain` runs only the benchmarks whose file name contains "explain".
 */
import { readdirSync } from 'node:fs';

const filter = process.argv[2] ?? '';
const dir = new URL('.', import.meta.url);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && f.includes(filter))
  .sort();

for (const file of benches) {
  process.stdout.write(`\n== ${file.replace('.bench.ts', '')} ==\n`);
  const mod = (await import(new URL(file, dir).href)) as { run: () => Promise<void> };
  await mod.run();
}
