"""Cost of the companion's copy and synchronisation wrappers per call, wrapped minus bare, on whichever torch is
importable (the fake torch: the wrapper's own cost; real torch on CPU: against its C methods).

Prints one JSON object: per call kind the bare and wrapped µs per call (best of 5 alternating rounds of N calls), inside a loop
(the recorder has seen a batch). Kinds whose tensors this torch cannot make (CUDA on a CPU build) are absent.
"""
import json
import sys
import timeit
import types

import torch
from gpumem_torch import _compute, _transfers
from gpumem_torch._steps import StepRecorder, hook_optimizer

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100000


def cases():
    out = {}
    cpu = torch.empty(1)
    dtype = getattr(torch, "float16", None)
    if dtype is not None:
        out["to(dtype) of a CPU tensor (a dtype change)"] = lambda: cpu.to(dtype)
    out["to() of a CPU tensor to its own device"] = lambda: cpu.to("cpu")
    out["tolist() of a CPU tensor"] = lambda: cpu.tolist()
    try:
        gpu = torch.empty(1, device="cuda")
        out["to() of a CUDA tensor to its own device"] = lambda: gpu.to("cuda")
        out["host-to-device copy (pageable, blocking)"] = lambda: cpu.to("cuda")
        out["item() of a CUDA tensor (synchronising)"] = lambda: gpu.item()
    except Exception:
        pass
    return out


class Stub:
    """A tensor whose copy costs nothing, so wrapped minus bare is the wrapper's own cost on the copy path."""
    is_cuda = False
    nbytes = 4 << 20

    def __init__(self, cuda=False):
        self.is_cuda = cuda

    def is_pinned(self):
        return False

    def to(self, target, non_blocking=False):
        return ON_GPU

    def item(self):
        return 0.0


ON_GPU = Stub(cuda=True)
stub_cases = {
    "host-to-device copy, wrapper's own cost (copy-free stub tensor)": lambda: Stub().to("cuda"),
    "item() of a CUDA tensor, wrapper's own cost (stub)": lambda: ON_GPU.item(),
}
METHODS = ("to", "cuda", "item", "cpu", "tolist")


def swap(wrapped):
    """Puts the wrapped (True) or the original (False) methods on torch.Tensor and the stub."""
    for cls in (torch.Tensor, Stub):
        for name in METHODS:
            fn = cls.__dict__.get(name)
            if fn is None:
                continue
            if wrapped and hasattr(cls, "_gpumem_saved_" + name):
                setattr(cls, name, getattr(cls, "_gpumem_saved_" + name))
            elif not wrapped and getattr(fn, "_gpumem_wrapped", False):
                setattr(cls, "_gpumem_saved_" + name, fn)
                setattr(cls, name, fn.__wrapped__)


recorder = StepRecorder(lambda m: None)
_transfers.install(torch, recorder)
_transfers.wrap_tensor_class(Stub, recorder, compiling=_transfers.compiling_probe(torch), dtype=getattr(torch, "dtype", None))
recorder.last_end = 0.0
all_cases = dict(cases(), **stub_cases)
bare = {name: float("inf") for name in all_cases}
wrapped = dict(bare)
# Rounds alternate bare and wrapped so a machine that gets busier or quieter affects both alike.
for _ in range(5):
    swap(False)
    for name, fn in all_cases.items():
        bare[name] = min(bare[name], timeit.timeit(fn, number=N) / N * 1e6)
    swap(True)
    for name, fn in all_cases.items():
        wrapped[name] = min(wrapped[name], timeit.timeit(fn, number=N) / N * 1e6)
# Once per step whatever the model: Tensor.backward's wrapper and the three global optimizer-step hooks
# (step boundary, CUDA-event start and end), on the four steps in five that record no events.
class Loss:
    def backward(self):
        return None


pre_hooks, post_hooks = [], []
stub_torch = types.SimpleNamespace(
    Tensor=Loss, cuda=types.SimpleNamespace(Event=object, is_initialized=lambda: False),
    optim=types.SimpleNamespace(optimizer=types.SimpleNamespace(
        register_optimizer_step_pre_hook=pre_hooks.append, register_optimizer_step_post_hook=post_hooks.append)))
step_recorder = StepRecorder(lambda m: None)
step_recorder.boundary = "dataloader"
hook_optimizer(stub_torch, step_recorder)
_compute.install(stub_torch, step_recorder, compiling=_transfers.compiling_probe(torch))
loss = Loss()
no_hooks = []


def run_hooks(pre, post):
    for h in pre:
        h(None, (), {})
    for h in post:
        h(None, (), {})


once = {
    "Tensor.backward wrapper, untimed step (stub)": (lambda: Loss.backward.__wrapped__(loss), lambda: loss.backward()),
    "optimizer.step global hooks, untimed step (3 hooks against none)": (lambda: run_hooks(no_hooks, no_hooks), lambda: run_hooks(pre_hooks, post_hooks)),
}
for name, (b, w) in once.items():
    bare[name] = min(timeit.timeit(b, number=N) / N * 1e6 for _ in range(5))
    wrapped[name] = min(timeit.timeit(w, number=N) / N * 1e6 for _ in range(5))
print(json.dumps({"calls": N, "torch": str(torch.__version__), "kinds": [
    {"kind": k, "bareUs": bare[k], "wrappedUs": wrapped[k]} for k in bare]}))
