/**
 * `npm run bench`: runs every bench/*.bench.ts in turn. Each prints its own measurements and the ratio
 * against the peer it names, measured in the same run. Benchmarks are never timed tests.
 * `npm run bench -- explain` runs only the benchmarks whose file name contains "explain".
 * `npm run bench -- --dry-run [filter]` checks the environment and lists what would run, measuring nothing.
 *
 * The fake NVML driver charges the H100's per-call costs (GPUMEM_FAKE_NVML_COSTS=h100, set here when unset);
 * any other value is refused, since a fake whose calls are free measures nothing a user would see.
 */
import { readdirSync } from 'node:fs';
import { useRealCosts } from './fake-costs.js';

const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');
const filter = args.find((a) => a !== '--dry-run') ?? '';
const refused = useRealCosts();
if (refused) {
  process.stderr.write(`bench: refusing to run: ${refused}\n`);
  process.exit(2);
}
process.stdout.write(`fake NVML costs: GPUMEM_FAKE_NVML_COSTS=${process.env.GPUMEM_FAKE_NVML_COSTS} (per-call CPU time measured on an H100, test/fake-nvml/fake_costs.c)\n`);
const dir = new URL('.', import.meta.url);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && f.includes(filter))
  .sort();

if (dryRun) {
  process.stdout.write(`would run: ${benches.map((f) => f.replace('.bench.ts', '')).join(', ') || 'nothing'}\n`);
  process.exit(0);
}

for (const file of benches) {
  process.stdout.write(`\n== ${file.replace('.bench.ts', '')} ==\n`);
  const mod = (await import(new URL(file, dir).href)) as { run: () => Promise<void> };
  await mod.run();
}
