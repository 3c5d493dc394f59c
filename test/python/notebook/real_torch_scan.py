"""The holder scan against real torch (on the CPU; only its "is it on a GPU" test is bypassed): a module's
parameters and gradients through nn.Module's own attributes, Adam's state after a step, and the tensors a real
autograd graph saved for backward (``_saved_*`` of its nodes). Prints {name: bytes} as JSON, and the expected
figures computed from the shapes."""
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
warnings.simplefilter("error")  # reading .grad of a non-leaf tensor warns: the scan must not

import torch  # noqa: E402
from gpumem_torch import _notebook_scan as scan_module  # noqa: E402


def cpu_storage(torch, t):
    if not isinstance(t, torch.Tensor):
        return None
    storage = t.untyped_storage()
    return ("storage", storage.data_ptr()), int(storage.nbytes())


scan_module._storage = cpu_storage
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Linear(256, 10)))
opt = torch.optim.Adam(model.parameters())
model(torch.randn(64, 256)).sum().backward()
opt.step()
kept = model(torch.randn(32, 256)).relu().sum()
params = sum(p.numel() for p in model.parameters()) * 4
found = {h.name: h.bytes for h in scan_module.scan(torch, {"model": model, "opt": opt, "loss": kept})}
print(json.dumps({"found": found, "params": params}))
