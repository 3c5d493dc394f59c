"""Copy and synchronisation timing with a fake clock: known phases give exactly the per-step figures, set-up before
the first batch is not counted, CPU-only calls are not counted, and the wrapped methods return what they did."""
import sys
import unittest

from helpers import PYTHON_DIR

sys.path[:0] = [PYTHON_DIR]
from gpumem_torch._steps import StepRecorder, wrap_iterator_class  # noqa: E402
from gpumem_torch._transfers import _non_blocking_to, wrap_synchronize, wrap_tensor_class  # noqa: E402

MiB = 1 << 20


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def make_tensor(clock):
    class T:
        """A tensor whose copies take 1 ms per MiB when blocking, 0.1 ms when pinned and non_blocking; item() waits 3 ms."""

        def __init__(self, nbytes, cuda=False, pinned=False):
            self.nbytes, self.is_cuda, self.pinned = nbytes, cuda, pinned
            self.shape = (nbytes,)

        def is_pinned(self):
            return self.pinned

        def to(self, target, *args, non_blocking=False, **kwargs):
            to_cuda = str(target).startswith("cuda")
            if to_cuda == self.is_cuda:
                return self
            clock.t += 0.0001 if (non_blocking and self.pinned) else 0.001 * self.nbytes / MiB
            return T(self.nbytes, cuda=to_cuda)

        def cuda(self, device=None, non_blocking=False):
            return self.to("cuda", non_blocking=non_blocking)

        def item(self):
            if self.is_cuda:
                clock.t += 0.003
            return 1.5

        def cpu(self):
            return self.to("cpu")

        def tolist(self):
            return [1.5]

    return T


class TransfersTest(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.sent = []
        self.recorder = StepRecorder(self.sent.append, clock=self.clock)
        self.T = make_tensor(self.clock)
        wrap_tensor_class(self.T, self.recorder, clock=self.clock)
        self.synced = []
        self.cuda = type("cuda", (), {"synchronize": staticmethod(lambda: self.synced.append(1))})
        wrap_synchronize(self.cuda, self.recorder, clock=self.clock)

    def loop(self, steps, body):
        clock, T = self.clock, self.T

        class It:
            def __next__(self):
                clock.t += 0.005  # 5 ms waiting for data
                return T(4 * MiB)

        wrap_iterator_class(It, self.recorder, clock=clock)
        it = It()
        # steps + 1 fetches make `steps` steps; what the last batch's body does belongs to no completed step.
        for i in range(steps + 1):
            body(i, next(it))

    def test_known_copy_and_sync_phases(self):
        T = self.T
        # Set-up before the first batch: the model's 100 MiB go to the GPU, a synchronize; none of it is a step's.
        T(100 * MiB).to("cuda")
        self.cuda.synchronize()
        labels = T(1 * MiB).to("cpu")

        def body(i, batch):
            x = batch.to("cuda")                                     # 4 MiB pageable, blocking: 4 ms
            y = T(1 * MiB, pinned=True).to("cuda", non_blocking=True)  # 1 MiB pinned, non-blocking: 0.1 ms
            self.assertTrue(x.is_cuda and y.is_cuda)
            self.assertIs(x.to("cuda"), x)                          # already there: no copy
            self.assertEqual(labels.item(), 1.5)                    # a CPU tensor's item(): no synchronisation
            if i % 2 == 0:
                self.assertEqual(x.item(), 1.5)                     # 3 ms waiting for the GPU, every other step
            self.clock.t += 0.010

        self.loop(10, body)
        self.recorder.flush()
        m = self.sent[-1]
        self.assertEqual(m["steps"], 10)
        c = m["copies"]
        self.assertEqual((c["count"], c["bytes"], c["blockingCount"], c["blockingBytes"], c["pageableBytes"]),
                         (20, 50 * MiB, 10, 40 * MiB, 40 * MiB))
        self.assertAlmostEqual(c["ms"], 41.0, places=6)
        self.assertAlmostEqual(c["blockingMs"], 40.0, places=6)
        s = m["syncs"]
        # The item() calls after fetches 1, 3, … 9 fall in steps 1, 3, … 9; the one after the 11th fetch in no completed step.
        self.assertEqual(s["steps"], 5)
        self.assertEqual(s["byKind"], {"item": {"count": 5, "ms": 15.0}})
        self.assertEqual(self.synced, [1])

    def test_results_errors_and_arguments_pass_through(self):
        T = self.T
        self.recorder.last_end = 0.0  # inside a loop
        cpu = T(MiB)
        self.assertEqual(cpu.tolist(), [1.5])
        with self.assertRaises(TypeError):
            cpu.to()
        self.assertTrue(_non_blocking_to(("cuda", None, True), {}))
        self.assertTrue(_non_blocking_to((T(1), True), {}))
        self.assertFalse(_non_blocking_to(("cuda", None, False, True), {}))
        self.assertTrue(_non_blocking_to(("cuda",), {"non_blocking": True}))
        wrapped = T.to
        wrap_tensor_class(T, self.recorder)
        self.assertIs(T.to, wrapped)


if __name__ == "__main__":
    unittest.main()
