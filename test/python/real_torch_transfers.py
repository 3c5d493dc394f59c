"""The copy and synchronisation wrappers on real torch (CPU build, no CUDA): every call shape returns what it did
without them, CPU calls count nothing, and torch.compile traces through them without recompiling as the
recorder's state changes. Prints one JSON object for test/supervise/companion/transfers-real-torch.test.ts."""
import json
import sys

import torch
import torch._dynamo.testing
from gpumem_torch import _transfers
from gpumem_torch._steps import StepRecorder

bare = {}
x = torch.arange(6).reshape(2, 3)


def calls():
    return {
        "toDtype": str(x.to(torch.float64).dtype),
        "toSameDeviceIsSelf": x.to("cpu", non_blocking=True) is x,
        "toOther": str(x.to(torch.ones(1, dtype=torch.float16)).dtype),
        "toPositional": str(x.to("cpu", torch.float32, False, True).dtype),
        "toMemoryFormat": x.to(memory_format=torch.contiguous_format) is x,
        "item": x.sum().item(),
        "tolist": x.tolist(),
        "cpuIsSelf": x.cpu() is x,
        "module": str(torch.nn.Linear(3, 2).to(torch.float64).weight.dtype),
    }


before = calls()
recorder = StepRecorder(lambda m: None)
_transfers.install(torch, recorder)
recorder.last_end = 0.0  # as inside a training loop
after = calls()
try:
    torch.ones(1).to("cuda")
    error = None
except Exception as exc:  # a CPU build refuses; the wrapper must pass the same error through
    error = type(exc).__name__

counter = torch._dynamo.testing.CompileCounter()
compiled = torch.compile(lambda t: (t.to(torch.float64) * 2).cpu(), backend=counter)
results = []
for i in range(5):
    recorder.last_end = float(i)
    results.append(compiled(torch.ones(3)).tolist())

json.dump({
    "before": before, "after": after, "cudaError": error, "wrapped": getattr(torch.Tensor.to, "_gpumem_wrapped", False),
    "copies": recorder.pending_copies, "syncs": recorder.pending_syncs, "frames": counter.frame_count, "compiled": results,
}, sys.stdout)
