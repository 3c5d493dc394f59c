"""The companion never changes what the program does: failures inside torch, a missing API, a dead channel."""
import os
import shutil
import tempfile
import unittest
from collections import Counter

from helpers import SCRIPTS, Listener, last_json_line, of_type, run_python

TRAIN = os.path.join(SCRIPTS, "train_and_oom.py")
RATE = {"GPUMEM_COMPANION_RATE_HZ": "50"}


class NeverBreaksTest(unittest.TestCase):
    def setUp(self):
        self.listener = Listener()
        self.run_dir = tempfile.mkdtemp(prefix="gpumem-run-")

    def tearDown(self):
        self.listener.close()
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def assert_same_as_without(self, version, proc):
        plain = run_python(version, [TRAIN, "0.05"], site=False)
        self.assertEqual(proc.returncode, plain.returncode)
        self.assertEqual(last_json_line(proc.stdout), last_json_line(plain.stdout))

    def test_failures_inside_torch_are_reported_once_each(self):
        env = dict(RATE, GPUMEM_COMPANION_SNAPSHOT_DIR=self.run_dir, GPUMEM_COMPANION_MEMORY_FRACTION="0.9")
        proc = run_python("broken", [TRAIN, "0.05"], channel="unix:" + self.listener.path, env=env)
        self.assert_same_as_without("broken", proc)
        self.assertEqual(proc.stderr, "")
        errors = of_type(self.listener.messages(), "error")
        counts = Counter(e["what"] for e in errors)
        self.assertEqual(set(counts), {"memory fraction", "memory history", "oom observer"})
        self.assertTrue(all(n == 1 for n in counts.values()), counts)
        # Without the observer the OOM still arrives, from the counter.
        self.assertEqual([m["source"] for m in of_type(self.listener.messages(), "oom")], ["counter"])

    def test_a_torch_without_the_hooks_still_streams_statistics(self):
        env = dict(RATE, GPUMEM_COMPANION_SNAPSHOT_DIR=self.run_dir)
        proc = run_python("missing", [TRAIN, "0.1"], channel="unix:" + self.listener.path, env=env)
        self.assert_same_as_without("missing", proc)
        messages = self.listener.messages()
        self.assertEqual([e["what"] for e in of_type(messages, "error")], ["cuda setup"])
        self.assertEqual(of_type(messages, "stats")[-1]["devices"][0]["numOoms"], 1)
        self.assertEqual(of_type(messages, "hello")[0]["capabilities"]["historyStyle"], None)

    def test_unreachable_channel_costs_one_line_on_stderr(self):
        missing = os.path.join(self.run_dir, "nobody-listens.sock")
        proc = run_python("v2_4", [TRAIN, "0.05"], channel="unix:" + missing, env=RATE)
        self.assert_same_as_without("v2_4", proc)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn("cannot reach gpumem", lines[0])

    def test_bad_settings_disable_only_their_feature(self):
        env = dict(RATE, GPUMEM_COMPANION_MEMORY_FRACTION="1.5")
        proc = run_python("v2_4", [TRAIN, "0.05"], channel="unix:" + self.listener.path, env=env)
        self.assert_same_as_without("v2_4", proc)
        messages = self.listener.messages()
        errors = of_type(messages, "error")
        self.assertEqual(len(errors), 1)
        self.assertIn("GPUMEM_COMPANION_MEMORY_FRACTION", errors[0]["message"])
        self.assertTrue(of_type(messages, "stats"))

    def test_inactive_without_the_channel_variable(self):
        code = "import sys, torch\nprint('gpumem_torch' in sys.modules, sys.meta_path[0].__class__.__name__)\n"
        proc = run_python("v2_4", ["-c", code])
        self.assertEqual(proc.stdout.split()[0], "False", proc.stderr)
        self.assertNotEqual(proc.stdout.split()[1], "_PostImportFinder")

    def test_nothing_is_imported_until_torch_is(self):
        code = ("import sys\nprint('torch' in sys.modules, '_companion' in str(list(sys.modules)))\n"
                "import torch\nprint('gpumem_torch._companion' in sys.modules)\n")
        proc = run_python("v2_4", ["-c", code], channel="unix:" + self.listener.path)
        self.assertEqual(proc.stdout.split(), ["False", "False", "True"], proc.stderr)

    def test_a_forked_child_does_not_write_on_the_parents_channel(self):
        code = ("import os, torch\nx = torch.empty(1024, device='cuda')\n"
                "pid = os.fork()\n"
                "if pid == 0:\n    import gpumem_torch._companion as c\n    c.active().send({'type': 'stray'})\n"
                "    os._exit(0)\n"
                "os.waitpid(pid, 0)\n")
        proc = run_python("v2_4", ["-c", code], channel="unix:" + self.listener.path, env=RATE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        messages = self.listener.messages()
        self.assertEqual(of_type(messages, "stray"), [])
        self.assertEqual(len({m["pid"] for m in messages}), 1)


if __name__ == "__main__":
    unittest.main()
