"""Saying "no CUDA" with the likely cause: the static checks, device indices out of range, and the late
message of a companion whose torch never had a device (fake torch; real CPU torch is in no-cuda.test.ts)."""
import io
import os
import sys
import tempfile
import types
import unittest

from helpers import FAKES, PYTHON_DIR, Listener, of_type, run_python

sys.path[:0] = [os.path.join(FAKES, "v2_11"), PYTHON_DIR]
import torch  # noqa: E402  (the fake)

import gpumem_torch as gt  # noqa: E402
from gpumem_torch._cuda import hides_every_device, static_status  # noqa: E402


def built(compiled, cuda="12.4"):
    """A stand-in torch that only says how it was built."""
    fake = types.SimpleNamespace(__version__="2.9.0")
    fake.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(is_built=lambda: compiled))
    fake.version = types.SimpleNamespace(cuda=cuda if compiled else None)
    return fake


class StaticStatusTest(unittest.TestCase):
    def setUp(self):
        self.driver = tempfile.NamedTemporaryFile()
        self.present = (self.driver.name,)
        self.absent = (self.driver.name + ".missing",)

    def tearDown(self):
        self.driver.close()

    def test_cpu_only_build_is_named_first(self):
        status = static_status(built(False), {"CUDA_VISIBLE_DEVICES": ""}, self.present)
        self.assertFalse(status["compiled"])
        self.assertIn("CPU-only build", status["problem"])

    def test_hidden_devices(self):
        for value in ("", "-1", " -1,0"):
            with self.subTest(value=value):
                status = static_status(built(True), {"CUDA_VISIBLE_DEVICES": value}, self.present)
                self.assertIn("hides every GPU", status["problem"])
        for value in (None, "0", "GPU-1234,1"):
            self.assertFalse(hides_every_device(value), value)

    def test_no_driver_only_when_built_with_cuda(self):
        self.assertIn("no NVIDIA driver", static_status(built(True), {}, self.absent)["problem"])
        self.assertIsNone(static_status(built(True), {}, self.present)["problem"])
        # A torch that does not say how it was built gets no claim from the driver files alone.
        self.assertIsNone(static_status(types.SimpleNamespace(), {}, self.absent)["problem"])

    def test_status_fields(self):
        status = static_status(built(True), {"CUDA_VISIBLE_DEVICES": "0"}, self.present)
        self.assertEqual(status, {"compiled": True, "cudaVersion": "12.4", "visibleDevices": "0",
                                  "driverLoaded": True, "problem": None})


class DeviceRangeTest(unittest.TestCase):
    def test_index_out_of_range_says_how_many_devices(self):
        torch.empty(256, device="cuda")
        out = io.StringIO()
        info = gt.print_memory_info(device=3, file=out)
        self.assertEqual(out.getvalue(), "[gpumem] no CUDA device: cuda:3 is out of range: this process sees 1 device\n")
        self.assertIsNone(info["allocated_bytes"])
        self.assertIsNone(gt.memory_info("cuda:0")["no_cuda"])

    def test_in_range_prints_the_figures(self):
        out = io.StringIO()
        gt.print_memory_info(device=0, file=out)
        self.assertIn("cuda:0 · allocated", out.getvalue())


class LateMessageTest(unittest.TestCase):
    def test_a_process_without_devices_says_why_at_exit(self):
        listener = Listener()
        try:
            proc = run_python("v2_11", ["-c", "import torch\nprint(torch.cuda.is_available())"],
                              channel="unix:" + listener.path, env={"FAKE_TORCH_CUDA": "0"})
            self.assertEqual(proc.returncode, 0, proc.stderr)
            messages = listener.messages()
        finally:
            listener.close()
        self.assertIsNone(of_type(messages, "hello")[0]["cuda"]["problem"])
        late = of_type(messages, "cuda")
        self.assertEqual(len(late), 1, messages)
        self.assertIn("is_available() is False", late[0]["problem"])

    def test_a_process_with_a_device_sends_no_cuda_message(self):
        listener = Listener()
        try:
            proc = run_python("v2_11", ["-c", "import torch\ntorch.empty(16, device='cuda')"],
                              channel="unix:" + listener.path)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            messages = listener.messages()
        finally:
            listener.close()
        self.assertEqual(of_type(messages, "cuda"), [])
        self.assertTrue(of_type(messages, "stats"))


if __name__ == "__main__":
    unittest.main()
