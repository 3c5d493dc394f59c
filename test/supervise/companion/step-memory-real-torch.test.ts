/**
 * The per-step memory path against real torch (.venv, on the CPU): the attributes it relies on exist where it
 * expects them — the C++ nested statistics reader and peak reset, the global optimizer step hook, the OOM observer
 * and the snapshot — so the fake torch's shape is the real one; and a real training loop with the step recorder
 * and step memory installed runs unchanged (without CUDA no record is made, and nothing fails).
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';

const ROOT = resolve(__dirname, '../../..');

const SCRIPT = `
import json, torch
from gpumem_torch import _step_memory
from gpumem_torch._steps import install
reader, reset = _step_memory._nested_reader(torch)
rec = install(torch, lambda m: None)
rec.memory = _step_memory.StepMemory(torch, "optimizer" if rec.optimizer_hooked else "dataloader")
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.DataLoader([(torch.ones(4), torch.zeros(1))] * 12, batch_size=3)
for x, y in data:
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
print(json.dumps({
    "nested": reader.__name__ == "read", "reset": getattr(reset, "__name__", ""),
    "hooked": rec.optimizer_hooked, "steps": rec.steps, "memoryKept": rec.memory is not None, "records": rec.memory.step,
    "observer": callable(getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)),
    "snapshot": callable(getattr(torch.cuda.memory, "_snapshot", None)),
}))
`;

it('real torch offers what step memory reads, and a real loop runs with it installed', () => {
  const r = spawnSync(requireTestPython(), ['-c', SCRIPT], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python') }, timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').pop() as string)).toEqual({
    nested: true, reset: '_cuda_resetPeakMemoryStats', hooked: true, steps: 3, memoryKept: true, records: 0, observer: true, snapshot: true,
  });
}, 150_000);
