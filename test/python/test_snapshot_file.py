"""The OOM snapshot file is created, never opened through a name someone else put in the run folder."""
import os
import pickle
import shutil
import sys
import tempfile
import unittest

from helpers import PYTHON_DIR

sys.path[:0] = [PYTHON_DIR]
from gpumem_torch._oom import write_snapshot  # noqa: E402


class _Memory:
    @staticmethod
    def _snapshot():
        return {"segments": [], "device_traces": []}


class _Cuda:
    memory = _Memory


class _Torch:
    cuda = _Cuda


class SnapshotFileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpumem-snapfile-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_writes_a_private_pickle_under_its_final_name(self):
        path = write_snapshot(_Torch, self.dir, 7, 1)
        self.assertEqual(os.path.basename(path), "oom-snapshot-7-1.pickle")
        with open(path, "rb") as handle:
            self.assertEqual(pickle.load(handle), {"segments": [], "device_traces": []})
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        self.assertEqual(sorted(os.listdir(self.dir)), ["oom-snapshot-7-1.pickle"])

    def test_a_link_planted_at_the_temporary_name_is_refused_and_its_target_untouched(self):
        victim = os.path.join(self.dir, "victim")
        with open(victim, "w") as handle:
            handle.write("precious")
        os.symlink(victim, os.path.join(self.dir, "oom-snapshot-7-1.pickle.partial"))
        with self.assertRaises(FileExistsError):
            write_snapshot(_Torch, self.dir, 7, 1)
        with open(victim) as handle:
            self.assertEqual(handle.read(), "precious")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "oom-snapshot-7-1.pickle")))


if __name__ == "__main__":
    unittest.main()
