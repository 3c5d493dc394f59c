"""A step/epoch logger: first-batch memory, epoch peak, the batch size actually used, and samples/s."""
import sys
import time

from ._format import format_bytes
from .api import _cuda_live, _index, _torch


def _batch_size(batch):
    if isinstance(batch, int):
        return batch
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if isinstance(batch, dict) and batch:
        return _batch_size(next(iter(batch.values())))
    if isinstance(batch, (list, tuple)) and batch:
        first = batch[0]
        if hasattr(first, "shape") or isinstance(first, (list, tuple, dict)):
            return _batch_size(first)
        return len(batch)
    return None


class StepLogger:
    """Call ``start_epoch()``, then ``step(batch)`` after each optimizer step, then ``end_epoch()``.

    ``step`` takes the batch itself (its first dimension is the batch size) or an int. The logger prints the
    memory after the first step (what one step really needs), every ``every`` steps the throughput, and at
    the end of an epoch its peak, the batch sizes seen and samples/s. It resets the peak statistics at the
    start of each epoch. Returns from ``end_epoch()`` a dict with the same numbers.
    """

    def __init__(self, every=0, device=None, file=None, clock=time.perf_counter):
        self.every = every
        self.device = device
        self.file = file
        self.clock = clock
        self.epoch = -1
        self.first_batch_done = False
        self._reset_epoch()

    def _reset_epoch(self):
        self.steps = 0
        self.samples = 0
        self.batch_sizes = {}
        self.started = self.clock()

    def _print(self, text):
        print("[gpumem] " + text, file=self.file or sys.stdout)

    def _memory(self):
        torch = _torch()
        if not _cuda_live(torch):
            return None
        index = _index(torch, self.device)
        return index, int(torch.cuda.memory_allocated(index)), int(torch.cuda.memory_reserved(index)), \
            int(torch.cuda.max_memory_allocated(index))

    def start_epoch(self, epoch=None):
        """Begins an epoch: counters reset, peak statistics reset."""
        self.epoch = self.epoch + 1 if epoch is None else epoch
        self._reset_epoch()
        torch = _torch()
        if _cuda_live(torch):
            torch.cuda.reset_peak_memory_stats(_index(torch, self.device))

    def step(self, batch=None):
        """Records one step of ``batch`` (a tensor, a sequence/dict of tensors, or a batch size)."""
        size = _batch_size(batch) if batch is not None else None
        self.steps += 1
        if size is not None:
            self.samples += size
            self.batch_sizes[size] = self.batch_sizes.get(size, 0) + 1
        if not self.first_batch_done:
            self.first_batch_done = True
            mem = self._memory()
            if mem is not None:
                self._print("first batch (size %s): allocated %s, reserved %s, peak %s" % (
                    size if size is not None else "?", format_bytes(mem[1]), format_bytes(mem[2]),
                    format_bytes(mem[3])))
        if self.every and self.steps % self.every == 0:
            self._print("epoch %s step %d: %.1f samples/s" % (self.epoch, self.steps, self.samples_per_s()))

    def samples_per_s(self):
        """Samples per second since the epoch started (0 before any time has passed)."""
        elapsed = self.clock() - self.started
        return self.samples / elapsed if elapsed > 0 else 0.0

    def end_epoch(self):
        """Prints and returns the epoch summary: steps, samples, batch sizes, samples/s, peak and reserved."""
        mem = self._memory()
        summary = {
            "epoch": self.epoch,
            "steps": self.steps,
            "samples": self.samples,
            "batch_sizes": dict(sorted(self.batch_sizes.items())),
            "samples_per_s": self.samples_per_s(),
            "peak_allocated_bytes": mem[3] if mem else None,
            "reserved_bytes": mem[2] if mem else None,
        }
        sizes = ", ".join("%d×%d" % (s, n) for s, n in summary["batch_sizes"].items()) or "?"
        self._print("epoch %s: %d steps, batch %s, %.1f samples/s, peak %s, reserved %s" % (
            self.epoch, self.steps, sizes, summary["samples_per_s"],
            format_bytes(summary["peak_allocated_bytes"]), format_bytes(summary["reserved_bytes"])))
        return summary
