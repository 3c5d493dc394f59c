import { buildFakeNvml } from '../fake-nvml/build.js';
import { buildDist } from './dist.js';
import { buildSnapshotFixtures } from './snapshot-fixtures.js';
import { buildNotebookVenv, buildOldTorchVenv, buildPythonVenv } from './python-venv.js';

/** The list of build steps the suite needs before it runs; each returns when its artefact is up to date. */
const steps: Array<() => Promise<void>> = [];
steps.push(buildFakeNvml);
steps.push(buildSnapshotFixtures);
steps.push(buildDist);
steps.push(buildPythonVenv);
steps.push(buildOldTorchVenv);
steps.push(buildNotebookVenv);

export async function buildAll(): Promise<void> {
  for (const step of steps) await step();
}
