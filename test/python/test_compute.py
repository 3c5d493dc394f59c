"""CUDA-event timing of forward, backward and optimizer with a fake GPU clock: known phases give exactly the
per-phase totals, only one step in EVERY_STEPS is timed, events still running are read later (never waited
for), and gradient accumulation's micro-batches each count."""
import sys
import unittest

from helpers import PYTHON_DIR

sys.path[:0] = [PYTHON_DIR]
from gpumem_torch._compute import EVERY_STEPS, ComputeTimer  # noqa: E402


class Gpu:
    """A GPU clock; events complete once the GPU has reached them (``done_until``)."""

    def __init__(self):
        self.t = 0.0
        self.done_until = float("inf")
        self.initialized = True

    def is_initialized(self):
        return self.initialized

    def Event(self, enable_timing=False):  # noqa: N802 (torch's name)
        gpu = self

        class E:
            def record(self):
                self.at = gpu.t

            def query(self):
                return self.at <= gpu.done_until

            def elapsed_time(self, end):
                return (end.at - self.at) * 1000

        return E()


def step(gpu, timer, forward_s, backward_s, optimizer_s, micro=1):
    for _ in range(micro):
        gpu.t += forward_s
        started = timer.backward_started()
        gpu.t += backward_s
        timer.backward_ended(started)
    timer.optimizer_started()
    gpu.t += optimizer_s
    timer.optimizer_ended()


class ComputeTest(unittest.TestCase):
    def test_known_phases_one_step_in_every(self):
        gpu = Gpu()
        timer = ComputeTimer(gpu)
        for n in range(2 * EVERY_STEPS):
            timer.boundary(n)
            step(gpu, timer, 0.010, 0.020, 0.005)
        timer.boundary(2 * EVERY_STEPS)
        m = timer.message()
        self.assertEqual((m["forwardCount"], m["backwardCount"], m["optimizerCount"]), (2, 2, 2))
        self.assertAlmostEqual(m["forwardMs"], 20.0, places=6)
        self.assertAlmostEqual(m["backwardMs"], 40.0, places=6)
        self.assertAlmostEqual(m["optimizerMs"], 10.0, places=6)

    def test_running_events_are_read_later_not_waited_for(self):
        gpu = Gpu()
        timer = ComputeTimer(gpu)
        timer.boundary(0)
        step(gpu, timer, 0.010, 0.020, 0.005)
        gpu.done_until = 0.015  # the GPU is still inside the backward pass
        timer.boundary(1)
        m = timer.message()
        self.assertEqual((m["forwardCount"], m["backwardCount"], m["optimizerCount"]), (1, 0, 0))
        gpu.done_until = float("inf")
        timer.boundary(2)
        m = timer.message()
        self.assertEqual((m["backwardCount"], m["optimizerCount"]), (1, 1))
        self.assertAlmostEqual(m["backwardMs"], 20.0, places=6)

    def test_gradient_accumulation_and_optimizer_bounded_steps(self):
        gpu = Gpu()
        timer = ComputeTimer(gpu)
        timer.boundary(0)
        step(gpu, timer, 0.004, 0.008, 0.0, micro=3)
        timer.boundary(1)
        m = timer.message()
        self.assertEqual((m["forwardCount"], m["backwardCount"]), (3, 3))
        self.assertAlmostEqual(m["forwardMs"], 12.0, places=6)
        self.assertAlmostEqual(m["backwardMs"], 24.0, places=6)
        # A step bounded by optimizer.step(): the boundary comes inside its post-hooks, before the timer's own.
        timer = ComputeTimer(gpu)
        timer.boundary(0)
        timer.optimizer_started()
        gpu.t += 0.007
        timer.boundary(1)
        timer.optimizer_ended()
        timer.boundary(2)
        self.assertEqual(timer.message()["optimizerCount"], 1)
        self.assertAlmostEqual(timer.message()["optimizerMs"], 7.0, places=6)

    def test_nothing_is_recorded_before_cuda_is_initialised(self):
        gpu = Gpu()
        gpu.initialized = False
        timer = ComputeTimer(gpu)
        timer.boundary(0)
        step(gpu, timer, 0.010, 0.020, 0.005)
        timer.boundary(1)
        self.assertEqual(timer.message()["forwardCount"], 0)

    def test_a_failing_event_read_at_exit_still_sends_the_step_figures(self):
        sys.path[:0] = [PYTHON_DIR]
        from gpumem_torch._steps import StepRecorder

        class Broken:
            def message(self):
                raise RuntimeError("CUDA driver shutting down")

            def boundary(self, steps):
                pass

        sent = []
        recorder = StepRecorder(sent.append)
        recorder.compute = Broken()
        recorder.fetched(0.0, 0.001, None)
        recorder.fetched(0.010, 0.011, None)
        recorder.flush()
        self.assertEqual((sent[-1]["steps"], sent[-1]["compute"]), (1, None))


if __name__ == "__main__":
    unittest.main()
