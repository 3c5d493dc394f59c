"""The explicit API against the fake torch 2.11, in this process: every number checked against the fake allocator."""
import io
import os
import sys
import unittest

from helpers import FAKES, PYTHON_DIR, run_python

sys.path[:0] = [os.path.join(FAKES, "v2_11"), PYTHON_DIR]
import torch  # noqa: E402  (the fake)

import gpumem_torch as gt  # noqa: E402
from gpumem_torch._format import format_bytes  # noqa: E402

MiB = 1 << 20


def floats(n_bytes):
    return torch.empty(n_bytes // 4, device="cuda")


class ApiTest(unittest.TestCase):
    def setUp(self):
        torch.cuda.empty_cache()
        self.base = torch.cuda.memory_allocated(0)

    def test_clear_cuda_memory_returns_exactly_the_cached_bytes_it_released(self):
        keep = floats(30 * MiB)
        drop = floats(40 * MiB)
        del drop
        reserved = torch.cuda.memory_reserved(0)
        released = gt.clear_cuda_memory()
        self.assertEqual(released, reserved - torch.cuda.memory_reserved(0))
        self.assertEqual(released, 40 * MiB)
        self.assertEqual(gt.clear_cuda_memory(), 0)
        del keep

    def test_memory_info_reports_the_allocator_and_the_driver(self):
        keep = floats(10 * MiB + 100)
        info = gt.memory_info(0)
        self.assertEqual(info["allocated_bytes"] - self.base, 10 * MiB + 512)  # rounded to 512 B blocks
        self.assertEqual(info["reserved_bytes"], torch.cuda.memory_reserved(0))
        self.assertEqual(info["total_bytes"], 1 << 30)
        self.assertEqual(info["free_bytes"], (1 << 30) - info["reserved_bytes"])
        out = io.StringIO()
        gt.print_memory_info("after load", device=0, file=out)
        self.assertIn("allocated %s" % format_bytes(info["allocated_bytes"]), out.getvalue())
        self.assertIn("after load", out.getvalue())
        del keep

    def test_release_model_moves_parameters_and_returns_the_bytes_released(self):
        model = torch.nn.Module()
        model.add_parameter(20 * MiB // 4)
        model.add_parameter(20 * MiB // 4)
        for p in model.parameters():
            p.grad = floats(20 * MiB)
        released = gt.release_model(model)
        self.assertEqual(released, 80 * MiB)
        self.assertTrue(all(not p.data.is_cuda and p.grad is None for p in model.parameters()))
        self.assertEqual(torch.cuda.memory_allocated(0), self.base)

    def test_to_cpu_handles_nested_containers(self):
        batch = {"x": floats(4 * MiB), "y": [floats(MiB), 3]}
        moved = gt.to_cpu(batch)
        self.assertFalse(moved["x"].is_cuda)
        self.assertFalse(moved["y"][0].is_cuda)
        self.assertEqual(moved["y"][1], 3)
        self.assertTrue(batch["x"].is_cuda)

    def test_track_memory_reports_the_peak_of_the_block(self):
        out = io.StringIO()
        with gt.track_memory("forward", device=0, file=out) as block:
            tmp = floats(50 * MiB)
            kept = floats(5 * MiB)
            del tmp
        self.assertEqual(block.peak_above_start_bytes, 55 * MiB)
        self.assertEqual(block.delta_bytes, 5 * MiB)
        self.assertIn("forward: peak", out.getvalue())
        del kept

    def test_set_memory_fraction_validates_and_caps(self):
        for bad in (0, -0.1, 1.5, "half"):
            with self.assertRaises(ValueError):
                gt.set_memory_fraction(bad)
        gt.set_memory_fraction(0.5, device=0)
        try:
            self.assertEqual(torch._fake.devices[0].fraction, 0.5)
            with self.assertRaises(torch.OutOfMemoryError):
                floats(600 * MiB)
        finally:
            torch._fake.devices[0].fraction = None

    def test_reset_peak(self):
        tmp = floats(30 * MiB)
        del tmp
        gt.reset_peak()
        self.assertEqual(torch.cuda.max_memory_allocated(0), torch.cuda.memory_allocated(0))


class StepLoggerTest(unittest.TestCase):
    def test_epoch_summary_from_a_fake_clock(self):
        ticks = iter([0.0, 0.0, 2.0, 4.0])  # init, start_epoch, step 2, end_epoch
        out = io.StringIO()
        log = gt.StepLogger(every=2, file=out, clock=lambda: next(ticks))
        log.start_epoch()
        x = floats(8 * MiB)
        log.step(torch.empty(32, 3))      # batch of 32 on the CPU
        log.step(32)
        log.step([torch.empty(16), torch.empty(16)])
        summary = log.end_epoch()
        self.assertEqual(summary["steps"], 3)
        self.assertEqual(summary["samples"], 80)
        self.assertEqual(summary["batch_sizes"], {16: 1, 32: 2})
        self.assertEqual(summary["samples_per_s"], 20.0)
        self.assertEqual(summary["peak_allocated_bytes"], torch.cuda.max_memory_allocated(0))
        text = out.getvalue()
        self.assertIn("first batch (size 32)", text)
        self.assertIn("epoch 0 step 2: 32.0 samples/s", text)
        self.assertIn("batch 16×1, 32×2", text)
        del x

    def test_without_cuda_nothing_fails(self):
        code = ("import gpumem_torch as gt\nprint(gt.clear_cuda_memory(), gt.memory_info()['allocated_bytes'])\n"
                "log = gt.StepLogger(); log.start_epoch(); log.step(4); print(log.end_epoch()['samples'])\n")
        proc = run_python("v2_4", ["-c", code], env={"FAKE_TORCH_CUDA": "0"}, site=False)
        # No CUDA: figures are None (never zeros that look like a measurement), then the StepLogger's line.
        self.assertEqual(proc.stdout.split()[:3], ["0", "None", "[gpumem]"], proc.stderr)
        self.assertEqual(proc.stdout.split()[-1], "4")


class FormatTest(unittest.TestCase):
    def test_format_bytes_matches_gpumem(self):
        cases = {0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB", 30 * MiB: "30.00 MiB",
                 (1 << 30) - 1: "1024.00 MiB", 3 << 40: "3.00 TiB", -2048: "-2.00 KiB", None: "n/a"}
        for value, text in cases.items():
            self.assertEqual(format_bytes(value), text)


if __name__ == "__main__":
    unittest.main()
