"""Cost of the companion's step timing per training step, with the fake torch's DataLoader.

Prints one JSON object: the wrapper's cost per fetch measured over many back-to-back fetches (wrapped minus
bare), and, for steps of 1, 10 and 100 ms (sleeps), the wall time per step wrapped and bare.
"""
import json
import sys
import time

import torch
from gpumem_torch._steps import StepRecorder, wrap_iterator_class

Iter = torch.utils.data.dataloader._BaseDataLoaderIter


class Batch:
    shape = (64, 3)


def loop(n, step_s):
    batch = (Batch(), None)
    started = time.perf_counter()
    for _ in iter(torch.utils.data.DataLoader([batch] * n)):
        if step_s:
            time.sleep(step_s)
    return (time.perf_counter() - started) / n


def main():
    fetches = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    sleeps = [(0.001, 1000), (0.010, 200), (0.100, 20)]
    bare_fetch = min(loop(fetches, 0) for _ in range(3))
    bare_steps = {s: loop(n, s) for s, n in sleeps}
    sent = []
    wrap_iterator_class(Iter, StepRecorder(lambda m: sent.append(json.dumps(m))))
    wrapped_fetch = min(loop(fetches, 0) for _ in range(3))
    wrapped_steps = {s: loop(n, s) for s, n in sleeps}
    print(json.dumps({
        "fetches": fetches,
        "bareFetchUs": bare_fetch * 1e6,
        "wrappedFetchUs": wrapped_fetch * 1e6,
        "steps": [{"stepMs": s * 1000, "n": n, "bareMs": bare_steps[s] * 1000, "wrappedMs": wrapped_steps[s] * 1000}
                  for s, n in sleeps],
        "messages": len(sent),
    }))


main()
