"""The zero-code companion against every fake torch generation: statistics, OOM reports, snapshots."""
import os
import pickle
import shutil
import tempfile
import unittest

from helpers import SCRIPTS, VERSIONS, Listener, last_json_line, of_type, run_python

TRAIN = os.path.join(SCRIPTS, "train_and_oom.py")


class StreamTest(unittest.TestCase):
    def setUp(self):
        self.listener = Listener()
        self.run_dir = tempfile.mkdtemp(prefix="gpumem-run-")

    def tearDown(self):
        self.listener.close()
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def run_train(self, version, env=None):
        # 50 Hz and a 0.15 s pause: several samples land while the program holds its memory.
        env = dict({"GPUMEM_COMPANION_RATE_HZ": "50"}, **(env or {}))
        proc = run_python(version, [TRAIN, "0.15"], channel="unix:" + self.listener.path, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc, self.listener.messages()

    def test_statistics_equal_memory_stats_in_every_generation(self):
        for version in VERSIONS:
            with self.subTest(version=version):
                self.listener.clear()
                proc, messages = self.run_train(version)
                truth = last_json_line(proc.stdout)
                self.assertEqual(proc.stderr, "")
                hello = of_type(messages, "hello")
                self.assertEqual(len(hello), 1)
                self.assertEqual(hello[0]["schemaVersion"], 1)
                final = of_type(messages, "stats")[-1]["devices"][0]
                for key in ("allocatedBytes", "reservedBytes", "peakAllocatedBytes", "numOoms", "numAllocRetries"):
                    self.assertEqual(final[key], truth[key], key)
                self.assertEqual(of_type(messages, "bye")[-1]["dropped"], 0)
                # While the script slept: 3 × 10 MiB live, 64 MiB more cached.
                during = [m["devices"][0] for m in of_type(messages, "stats") if m["devices"][0]["numOoms"] == 0]
                self.assertTrue(during, "no statistics arrived while the program ran")
                self.assertEqual(during[-1]["allocatedBytes"], 30 << 20)
                self.assertEqual(during[-1]["reservedBytes"], 94 << 20)
                self.assertEqual(during[-1]["inactiveSplitBytes"], 64 << 20)

    def test_oom_is_reported_at_the_instant_or_from_the_counter(self):
        for version, source in (("v1_13", "counter"), ("v2_0", "observer"), ("v2_11", "observer")):
            with self.subTest(version=version):
                self.listener.clear()
                _, messages = self.run_train(version)
                ooms = of_type(messages, "oom")
                self.assertEqual(len(ooms), 1, ooms)
                self.assertEqual(ooms[0]["source"], source)
                self.assertEqual(ooms[0]["stats"]["numOoms"], 1)
                if source == "observer":
                    self.assertEqual(ooms[0]["requestedBytes"], 4 << 30)
                    self.assertEqual(ooms[0]["deviceLimitBytes"], 1 << 30)
                    self.assertEqual(ooms[0]["stats"]["allocatedBytes"], 30 << 20)

    def test_snapshot_on_oom_is_written_bounded_and_loadable(self):
        for version in ("v2_0", "v2_1", "v2_4", "v2_11"):
            with self.subTest(version=version):
                self.listener.clear()
                folder = os.path.join(self.run_dir, version)
                _, messages = self.run_train(version, env={
                    "GPUMEM_COMPANION_SNAPSHOT_DIR": folder, "GPUMEM_COMPANION_SNAPSHOT_MAX_ENTRIES": "5"})
                oom = of_type(messages, "oom")[0]
                self.assertIsNone(oom["snapshotError"])
                self.assertTrue(oom["snapshotPath"].startswith(folder))
                with open(oom["snapshotPath"], "rb") as handle:
                    self.assertEqual(handle.read(2), b"\x80\x04")  # protocol 4, readable by PyTorch's viewer
                    handle.seek(0)
                    snapshot = pickle.load(handle)
                self.assertIn("segments", snapshot)
                self.assertLessEqual(len(snapshot["device_traces"][0]), 5)
                self.assertEqual(os.listdir(folder), [os.path.basename(oom["snapshotPath"])])

    def test_memory_fraction_applies_before_the_first_allocation(self):
        code = ("import torch\n"
                "try:\n    torch.empty(60 << 20 >> 2, device='cuda'); print('fits')\n"
                "except torch.cuda.OutOfMemoryError:\n    print('oom')\n"
                "print(torch._fake.devices[0].fraction)\n")
        proc = run_python("v2_4", ["-c", code], channel="unix:" + self.listener.path,
                          env={"GPUMEM_COMPANION_MEMORY_FRACTION": "0.05"})
        self.assertEqual(proc.stdout.split(), ["oom", "0.05"], proc.stderr)
        plain = run_python("v2_4", ["-c", code])
        self.assertEqual(plain.stdout.split(), ["fits", "None"])

    def test_uncaught_oom_is_reported_and_the_traceback_still_printed(self):
        code = "import torch\ntorch.empty(4 << 30 >> 2, device='cuda')\n"
        proc = run_python("v2_4", ["-c", code], channel="unix:" + self.listener.path)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("OutOfMemoryError: CUDA out of memory", proc.stderr)
        exc = of_type(self.listener.messages(), "exception")
        self.assertEqual(len(exc), 1)
        self.assertTrue(exc[0]["oom"])
        self.assertIn("Tried to allocate 4096.00 MiB", exc[0]["message"])

    def test_rate_zero_sends_only_events_and_the_final_statistics(self):
        _, messages = self.run_train("v2_4", env={"GPUMEM_COMPANION_RATE_HZ": "0"})
        stats = of_type(messages, "stats")
        self.assertEqual(len(stats), 1)
        self.assertEqual(stats[0]["devices"][0]["numOoms"], 1)


if __name__ == "__main__":
    unittest.main()
