"""Peer of the trace benchmark: a workload script's step under plain FakeTensorMode on the CPU device — no recorder,
no CUDA emulation, no phase or module bookkeeping — which is what any fake-tensor step costs. The script's text is
changed only to stay on the CPU ("cuda" → "cpu", `.cuda()` dropped) and to run one step instead of its loop's ten
(the tracer ends the program after one step, GPUMEM_ESTIMATE_STEPS=1). Prints the seconds from just after
`import torch` to the step's end, as the tracer's own traceSeconds counts them (the script's other imports included).

Usage: python plain_fake.py SCRIPT
"""
import sys
import time

source = open(sys.argv[1]).read()
source = source.replace('device="cuda"', 'device="cpu"').replace(".cuda()", "").replace("range(10)", "range(1)")

import torch  # noqa: E402  (the tracer's clock starts once torch is imported)

started = time.perf_counter()
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

fake = FakeTensorMode(allow_non_fake_inputs=True)
# Module.to swaps fake parameters in place, which the mode's weak memo refuses; any fake-tensor program that moves
# a module must empty it first (the tracer does the same).
swap = torch.utils.swap_tensors
torch.utils.swap_tensors = lambda a, b: (fake.fake_tensor_converter.meta_converter.tensor_memo.clear(), swap(a, b))[1]
# Truncated-normal init loops on the values it draws, which fake tensors do not have (the tracer's init is
# value-free too): it leaves the tensor as it is.
torch.nn.init.trunc_normal_ = lambda tensor, *args, **kwargs: tensor
with fake:
    exec(compile(source, sys.argv[1], "exec"), {"__name__": "__main__"})
print("GPUMEM_PLAIN_SECONDS %.3f" % (time.perf_counter() - started), flush=True)
