"""Cost of the per-step memory records (the OOM forecast's input) per optimizer step, with the fake torch.

Prints one JSON object: µs per step of a bare boundary call (the peer: the recorder with step memory off), with
step memory on (read the counters, reset the peaks, keep the record), and with the in-process forecast history
the trainer callbacks add. The fake's counters cost what a Python dict costs; torch's own counter read
(``torch._C._cuda_memoryStats``) on a GPU is not part of this figure.
"""
import json
import sys
import time

import torch
from gpumem_torch._forecast import History
from gpumem_torch._step_memory import StepMemory


def per_step_us(memory, n):
    started = time.perf_counter()
    for _ in range(n):
        memory.boundary("optimizer")
        if len(memory.pending) >= 1000:
            memory.messages()  # what the once-a-second flush does
    return (time.perf_counter() - started) / n * 1e6


def bare_us(n):
    hook = lambda source: None  # noqa: E731  the call the step recorder makes with step memory off
    started = time.perf_counter()
    for _ in range(n):
        hook("optimizer")
    return (time.perf_counter() - started) / n * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    torch.empty(1024, device="cuda")  # CUDA initialised, as in a training loop
    best = {"bareUs": [], "recordUs": [], "historyUs": []}
    for _ in range(5):
        best["bareUs"].append(bare_us(n))
        best["recordUs"].append(per_step_us(StepMemory(torch, "optimizer"), n))
        with_history = StepMemory(torch, "optimizer")
        with_history.history = History()
        best["historyUs"].append(per_step_us(with_history, n))
    print(json.dumps({"steps": n, **{k: min(v) for k, v in best.items()}}))


main()
