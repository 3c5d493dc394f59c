"""Rank messages: the environment's at start, torch.distributed's right after init_process_group, each once;
nothing for a process that is no rank; the wrapped init_process_group returns and raises as before."""
import unittest

from helpers import Listener, of_type, run_python

PROGRAM = """
import os, torch, torch.distributed as dist
dist.init_process_group("nccl", rank=int(os.environ.get("AS_RANK", "1")), world_size=2)
print(dist.init_process_group.__wrapped__.__name__, flush=True)
try:
    dist.init_process_group("nccl", rank=1, world_size=2)
except RuntimeError as e:
    print("again:", e, flush=True)
"""


class RankTest(unittest.TestCase):
    def setUp(self):
        self.listener = Listener()

    def tearDown(self):
        self.listener.close()

    def run_program(self, env):
        proc = run_python("v2_11", ["-c", PROGRAM], channel="unix:" + self.listener.path, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc, of_type(self.listener.messages(), "rank")

    def test_environment_then_process_group(self):
        proc, ranks = self.run_program({"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2"})
        self.assertEqual(proc.stdout.splitlines(), ["init_process_group", "again: trying to initialize the default process group twice!"])
        self.assertEqual([(m["source"], m["rank"], m["localRank"], m["worldSize"], m["backend"]) for m in ranks],
                         [("env", 1, 1, 2, None), ("torch.distributed", 1, 1, 2, "nccl")])

    def test_mp_spawn_rank_has_only_the_process_group(self):
        _, ranks = self.run_program({"AS_RANK": "0"})
        self.assertEqual([(m["source"], m["rank"], m["localRank"], m["worldSize"]) for m in ranks], [("torch.distributed", 0, None, 2)])

    def test_no_rank_no_message(self):
        proc = run_python("v2_11", ["-c", "import torch"], channel="unix:" + self.listener.path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(of_type(self.listener.messages(), "rank"), [])


if __name__ == "__main__":
    unittest.main()
