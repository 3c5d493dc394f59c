"""Per-step memory records: each step's peaks are its own (reset at every boundary), what it left behind is read at
its end, only the counting boundary records, and records split into messages by device, gaps and size."""
import sys
import types
import unittest

from helpers import PYTHON_DIR

sys.path[:0] = [PYTHON_DIR]
from gpumem_torch import _step_memory  # noqa: E402
from gpumem_torch._step_memory import StepMemory  # noqa: E402


class Allocator:
    """Counters like the caching allocator's: current and peak of allocated and reserved, peaks reset to current."""

    def __init__(self, nested):
        self.allocated = self.reserved = self.peak_allocated = self.peak_reserved = 0
        self.device = 0
        self.resets = 0
        cuda = types.SimpleNamespace(is_initialized=lambda: True, current_device=lambda: self.device)
        self.torch = types.SimpleNamespace(cuda=cuda)
        if nested:
            self.torch._C = types.SimpleNamespace(_cuda_memoryStats=self.nested, _cuda_resetPeakMemoryStats=self.reset)
        else:
            cuda.memory_stats = self.flat
            cuda.reset_peak_memory_stats = self.reset

    def alloc(self, n):
        self.allocated += n
        self.reserved = max(self.reserved, self.allocated)
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def nested(self, device):
        return {"allocated_bytes": {"all": {"current": self.allocated, "peak": self.peak_allocated}},
                "reserved_bytes": {"all": {"current": self.reserved, "peak": self.peak_reserved}}}

    def flat(self, device):
        return {"allocated_bytes.all.current": self.allocated, "allocated_bytes.all.peak": self.peak_allocated,
                "reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.peak_reserved}

    def reset(self, device):
        self.resets += 1
        self.peak_allocated, self.peak_reserved = self.allocated, self.reserved


def leaking_steps(a, memory, steps, source="optimizer"):
    for _ in range(steps):
        a.alloc(100)       # activation
        a.alloc(-100)
        a.alloc(10)        # kept
        memory.boundary(source)


class StepMemoryTest(unittest.TestCase):
    def check_leak(self, nested):
        a = Allocator(nested)
        memory = StepMemory(a.torch, "optimizer")
        leaking_steps(a, memory, 4)
        (m,) = memory.messages()
        self.assertEqual(m["firstStep"], 1)
        self.assertEqual(m["leftBytes"], [10, 20, 30, 40])
        # Each step's own peak: what the previous step left, plus the 100-byte activation.
        self.assertEqual(m["peakAllocatedBytes"], [100, 110, 120, 130])
        self.assertEqual(m["reservedBytes"], [100, 110, 120, 130])
        self.assertEqual(a.resets, 4)
        self.assertEqual(memory.messages(), [])

    def test_nested_reader(self):
        self.check_leak(True)

    def test_flat_reader(self):
        self.check_leak(False)

    def test_other_boundary_records_nothing(self):
        a = Allocator(True)
        memory = StepMemory(a.torch, "optimizer")
        leaking_steps(a, memory, 3, source="dataloader")
        self.assertEqual((memory.messages(), a.resets), ([], 0))

    def test_dataloader_first_fetch_only_starts_step_one(self):
        a = Allocator(True)
        a.alloc(1000)  # set-up before the loop
        memory = StepMemory(a.torch, "dataloader")
        memory.boundary("dataloader")
        leaking_steps(a, memory, 2, source="dataloader")
        (m,) = memory.messages()
        self.assertEqual((m["firstStep"], m["leftBytes"], m["peakAllocatedBytes"]), (1, [1010, 1020], [1100, 1110]))

    def test_split_by_device_and_size(self):
        a = Allocator(True)
        memory = StepMemory(a.torch, "optimizer")
        old = _step_memory.ROWS_PER_MESSAGE
        _step_memory.ROWS_PER_MESSAGE = 3
        try:
            leaking_steps(a, memory, 4)
            a.device = 1
            leaking_steps(a, memory, 1)
            got = [(m["device"], m["firstStep"], len(m["leftBytes"])) for m in memory.messages()]
        finally:
            _step_memory.ROWS_PER_MESSAGE = old
        self.assertEqual(got, [(0, 1, 3), (0, 4, 1), (1, 5, 1)])

    def test_a_failing_reader_stops_recording(self):
        a = Allocator(True)
        memory = StepMemory(a.torch, "optimizer")
        memory.read = lambda device: 1 / 0
        with self.assertRaises(ZeroDivisionError):
            memory.boundary("optimizer")
        memory.boundary("optimizer")  # silent from now on
        self.assertEqual(memory.messages(), [])


if __name__ == "__main__":
    unittest.main()


class GrowthSitesTest(unittest.TestCase):
    def test_sites_that_rose_only_outside_torch_largest_first(self):
        from gpumem_torch._growth_sites import grown_sites, live_by_site

        def block(size, filename, line, state="active_allocated"):
            return {"size": size, "state": state, "frames": [
                {"filename": "/x/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"},
                {"filename": filename, "line": line, "name": "step"}]}

        skip = ("/x/site-packages/torch/",)
        before = live_by_site({"segments": [{"device": 0, "blocks": [block(100, "train.py", 9), block(50, "train.py", 3)]}]}, 0, skip)
        after = live_by_site({"segments": [
            {"device": 0, "blocks": [block(100, "train.py", 9), block(100, "train.py", 9), block(300, "eval.py", 2),
                                     block(50, "train.py", 3), block(999, "train.py", 8, state="inactive")]},
            {"device": 1, "blocks": [block(5000, "train.py", 9)]}]}, 0, skip)
        self.assertEqual(grown_sites(before, after), [
            {"site": "eval.py:2 in step", "bytes": 300, "blocks": 1},
            {"site": "train.py:9 in step", "bytes": 100, "blocks": 1},
        ])


def with_program_readers(a):
    """The readers a program calls, built as torch builds them: every one goes through
    ``torch.cuda.memory.memory_stats_as_nested_dict``, looked up when called (a module global in torch)."""
    memory = types.SimpleNamespace(memory_stats_as_nested_dict=lambda device=None: a.nested(device))

    def flat(device=None):
        s = memory.memory_stats_as_nested_dict(device)
        return {"%s.all.%s" % (k, f): v for k, d in s.items() for f, v in d["all"].items()}
    a.torch.cuda.memory = memory
    a.torch.cuda.memory_stats = flat
    a.torch.cuda.max_memory_allocated = lambda device=None: flat(device)["allocated_bytes.all.peak"]
    a.torch.cuda.max_memory_reserved = lambda device=None: flat(device)["reserved_bytes.all.peak"]
    a.torch.cuda.reset_peak_memory_stats = lambda device=None: a.reset(device)
    memory.reset_peak_memory_stats = a.torch.cuda.reset_peak_memory_stats
    return a


class ProgramPeaksTest(unittest.TestCase):
    """The boundaries reset the peaks; what the program reads must not change because of it."""

    def check(self, nested):
        a = Allocator(nested)
        if nested:
            with_program_readers(a)
        else:
            # As the fake torch has it: straight to the counters, not through memory_stats.
            a.torch.cuda.max_memory_allocated = lambda device=None: a.peak_allocated
        cuda = a.torch.cuda
        memory = StepMemory(a.torch, "optimizer")
        a.alloc(500)
        a.alloc(-500)          # a 500-byte peak in the first step
        memory.boundary("optimizer")
        leaking_steps(a, memory, 3)
        # Each record is the step's own; the program still sees the run's peak, in every reader.
        self.assertEqual(memory.messages()[0]["peakAllocatedBytes"], [500, 100, 110, 120])
        self.assertEqual(cuda.max_memory_allocated(), 500)
        self.assertEqual(cuda.memory_stats()["allocated_bytes.all.peak"], 500)
        self.assertEqual(cuda.memory_stats()["allocated_bytes.all.current"], 30)
        if nested:
            self.assertEqual(cuda.max_memory_reserved(), 500)
        # The program's own reset starts its peaks afresh, as torch's does; the records are untouched.
        cuda.reset_peak_memory_stats()
        self.assertEqual(cuda.max_memory_allocated(), 30)
        leaking_steps(a, memory, 1)
        self.assertEqual(cuda.max_memory_allocated(), 130)
        self.assertEqual(memory.messages()[0]["peakAllocatedBytes"], [130])

    def test_torch_readers(self):
        self.check(True)

    def test_flat_readers(self):
        self.check(False)
