/**
 * The per-step memory path against real torch (.venv, on the CPU): the attributes it relies on exist where it
 * expects them — the C++ nested statistics reader and peak reset, the global optimizer step hook, the OOM observer
 * and the snapshot — so the fake torch's shape is the real one; and a real training loop with the step recorder
 * and step memory installed runs unchanged (without CUDA no record is made, and nothing fails).
 */
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { runProcess } from '../../helpers/run-process.js';

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

it('real torch offers what step memory reads, and a real loop runs with it installed', async () => {
  const r = await runProcess(requireTestPython(), ['-c', SCRIPT], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python') }, timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').pop() as string)).toEqual({
    nested: true, reset: '_cuda_resetPeakMemoryStats', hooked: true, steps: 3, memoryKept: true, records: 0, observer: true, snapshot: true,
  });
}, 150_000);

// Real torch's own readers with its C++ statistics replaced by a stand-in (no CUDA here): every one of them goes
// through torch.cuda.memory.memory_stats_as_nested_dict, so the peaks the boundaries reset and KeptPeaks merges
// back reach the program whatever it calls.
const READERS = `
import json, torch
from gpumem_torch._step_memory import KeptPeaks
counters = {"allocated_bytes": {"all": {"current": 30, "peak": 130}}, "reserved_bytes": {"all": {"current": 64, "peak": 192}}}
torch.cuda.memory.memory_stats_as_nested_dict = lambda device=None: json.loads(json.dumps(counters))
torch.cuda.current_device = lambda: 0
torch.cuda.memory.reset_peak_memory_stats = lambda device=None: None
torch.cuda.reset_peak_memory_stats = torch.cuda.memory.reset_peak_memory_stats
kept = KeptPeaks(torch)
kept.keep(0, {("allocated_bytes", "all", "peak"): 500, ("reserved_bytes", "all", "peak"): 600})
kept.install()
seen = [torch.cuda.max_memory_allocated(0), torch.cuda.max_memory_reserved(0), torch.cuda.memory_stats(0)["allocated_bytes.all.peak"]]
torch.cuda.reset_peak_memory_stats(0)
after = [torch.cuda.max_memory_allocated(0), torch.cuda.max_memory_reserved(0)]
print(json.dumps({"seen": seen, "afterReset": after}))
`;

it('real torch readers (max_memory_allocated, max_memory_reserved, memory_stats) see the peaks step memory resets', async () => {
  const r = await runProcess(requireTestPython(), ['-c', READERS], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python') }, timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').pop() as string)).toEqual({ seen: [500, 600, 500], afterReset: [130, 192] });
}, 150_000);
