import { fileURLToPath } from 'node:url';
import { openSmiSource } from '../../../src/sources/smi/index.js';
import { runSourceContract } from '../contract.js';
import { MiB, XML_EXPECTED } from './expected.js';

const FAKE_SMI = fileURLToPath(new URL('../../fake-smi/nvidia-smi', import.meta.url));

for (const exp of XML_EXPECTED) {
  runSourceContract(
    `nvidia-smi ${exp.file}`,
    () => openSmiSource({ smiPath: FAKE_SMI, env: { ...process.env, GPUMEM_FAKE_SMI_XML: exp.file } }),
    {
      // Each of the four fields is rounded to whole MiB by nvidia-smi on its own.
      memoryToleranceBytes: 2 * MiB,
      deviceCount: exp.gpus.length,
      pids: exp.gpus.flatMap((g) => g.procs.map(([pid]) => pid)).sort((a, b) => a - b),
    },
  );
}
