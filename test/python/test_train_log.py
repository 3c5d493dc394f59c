"""What the trainer callbacks log, with the fake torch (exact allocator counters): a leaking loop logs its exact
per-step memory and an OOM step forecast that the fake allocator then meets; a flat loop logs the same figures
with no forecast; at the OOM the log folder gets the allocator's numbers, an explanation naming the growth, and a
snapshot. Without gpumem supervising (no channel) and under it (the companion's records are reused)."""
import json
import os
import tempfile
import unittest

from helpers import Listener, last_json_line, run_python

LOOP = r"""
import json, sys, torch
from gpumem_torch._train_log import TrainingMemoryLog
MiB = 1 << 20
leak, log_dir = int(sys.argv[1]), sys.argv[2]
resumed = int(sys.argv[3]) if len(sys.argv) > 3 else None  # the trainer's step count at the start, as after a resume
log = TrainingMemoryLog(torch)
opt = torch.optim.SGD([])
logged, kept, oom_step = [], [], None
for step in range(1, 400):
    try:
        x = torch.empty(16 * MiB // 4, device="cuda")
        if leak: kept.append(torch.empty(leak * MiB // 4, device="cuda"))
        del x
    except torch.OutOfMemoryError:
        oom_step = step
        break
    opt.step()
    log.step_ended()
    if step == 1: log.watch_ooms(log_dir)
    logged.append(log.metrics() if resumed is None else log.metrics(global_step=resumed + step))
print(json.dumps({"logged": logged, "oom": oom_step, "files": sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []}))
"""


class TrainLogTest(unittest.TestCase):
    def run_loop(self, leak, channel=None, resumed=None):
        folder = tempfile.mkdtemp(prefix="gpumem-trainlog-")
        script = os.path.join(folder, "loop.py")
        with open(script, "w") as handle:
            handle.write("import os\n" + LOOP)
        logs = os.path.join(folder, "logs")
        # A 2 GiB fake GPU.
        r = run_python("v2_11", [script, str(leak), logs] + ([] if resumed is None else [str(resumed)]), channel=channel, site=channel is not None,
                       env={"FAKE_TORCH_TOTAL_BYTES": str(2048 << 20)})
        self.assertEqual(r.returncode, 0, r.stderr)
        return last_json_line(r.stdout), logs

    def test_leak_forecast_met_by_the_allocator_and_oom_written(self):
        out, logs = self.run_loop(16)
        MiB = 1 << 20
        first = out["logged"][0]
        self.assertEqual(first["gpumem/allocated_bytes"], 16 * MiB)
        self.assertEqual(first["gpumem/step_peak_allocated_bytes"], 32 * MiB)
        late = out["logged"][-1]
        self.assertAlmostEqual(late["gpumem/forecast_growth_bytes_per_step"], 16 * MiB, delta=1)
        # Forecast at step 60 of a 16 MiB/step leak on a 2 GiB GPU; the fake allocator then refuses within a step of it.
        at60 = out["logged"][59]
        self.assertLessEqual(abs(at60["gpumem/forecast_oom_step"] - out["oom"]), 1)
        self.assertEqual(at60["gpumem/forecast_warning"], 1)
        self.assertNotIn("gpumem/forecast_oom_step", out["logged"][9])  # too few steps to call it growth yet
        names = out["files"]
        self.assertTrue(any(n.startswith("gpumem-oom-") and n.endswith(".json") for n in names), names)
        self.assertTrue(any(n.endswith(".pickle") for n in names), names)
        record = json.load(open(os.path.join(logs, [n for n in names if n.endswith(".json")][0])))
        self.assertEqual(record["step"], out["oom"])
        self.assertIn("Each step left 16.00 MiB more allocated", record["explanation"])

    def test_resumed_training_gets_forecast_steps_in_the_trainers_count(self):
        fresh, _ = self.run_loop(16)
        resumed, _ = self.run_loop(16, resumed=10_000)
        at60, again = fresh["logged"][59], resumed["logged"][59]
        self.assertEqual(again["gpumem/forecast_oom_step"], at60["gpumem/forecast_oom_step"] + 10_000)
        self.assertEqual(again["gpumem/allocated_bytes"], at60["gpumem/allocated_bytes"])

    def test_flat_loop_logs_figures_without_forecast(self):
        out, _ = self.run_loop(0)
        self.assertIsNone(out["oom"])
        self.assertEqual(len(out["logged"]), 399)
        last = out["logged"][-1]
        self.assertEqual(last["gpumem/allocated_bytes"], 0)
        self.assertEqual(last["gpumem/step_peak_allocated_bytes"], 16 * (1 << 20))
        self.assertEqual(last["gpumem/forecast_warning"], 0)
        self.assertFalse([k for k in last if k.startswith("gpumem/forecast_") and k != "gpumem/forecast_warning"])

    def test_under_gpumem_the_companion_records_are_reused(self):
        listener = Listener()
        try:
            out, _ = self.run_loop(16, channel="unix:" + listener.path)
            messages = listener.messages()
        finally:
            listener.close()
        memory = [m for m in messages if m.get("type") == "memory"]
        self.assertTrue(memory)
        # The same steps the callback logged, as sent to gpumem: one reader, one reset per step.
        self.assertEqual(memory[0]["leftBytes"][:5], [l["gpumem/allocated_bytes"] for l in out["logged"][:5]])
        self.assertEqual(memory[0]["peakAllocatedBytes"][:5], [l["gpumem/step_peak_allocated_bytes"] for l in out["logged"][:5]])


class OptionalImportsTest(unittest.TestCase):
    def test_each_callback_module_needs_its_library(self):
        for module, library in (("gpumem_torch.lightning", "lightning"), ("gpumem_torch.huggingface", "transformers")):
            r = run_python("v2_11", ["-c", "import importlib, sys\n"
                                     "try:\n    importlib.import_module(%r)\nexcept ImportError as e:\n    print('missing', e.name)\n"
                                     "else:\n    print('imported')\n"
                                     "import gpumem_torch; print('package ok')" % module], site=False)
            has = run_python("v2_11", ["-c", "import importlib.util; print(importlib.util.find_spec(%r) is not None)" % library], site=False)
            if has.stdout.strip() == "True":
                continue  # the library is installed for this interpreter: nothing to check here
            self.assertIn("missing", r.stdout, r.stderr)
            self.assertIn("package ok", r.stdout)


if __name__ == "__main__":
    unittest.main()
