"""Step timing with a fake clock: known wait and compute phases give exactly the totals, batches of any shape
give their first dimension, and the user's iterator behaves exactly as before (values, StopIteration, errors)."""
import sys
import unittest

from helpers import PYTHON_DIR

sys.path[:0] = [PYTHON_DIR]
from gpumem_torch._batch import _first_dim, _tokens, asked_batch, loader_settings  # noqa: E402
from gpumem_torch._steps import StepRecorder, wrap_iterator_class  # noqa: E402


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Shaped:
    def __init__(self, *shape):
        self.shape = shape


class StepsTest(unittest.TestCase):
    def test_known_phases(self):
        clock = Clock()
        sent = []
        recorder = StepRecorder(sent.append, clock=clock)
        recorder.asked = 128

        class It:
            def __init__(self):
                self.left = 4

            def __next__(self):
                clock.t += 0.030  # 30 ms waiting for data
                if self.left == 0:
                    raise StopIteration
                self.left -= 1
                return (Shaped(96, 3), None)

        wrap_iterator_class(It, recorder, clock=clock)
        it = It()
        got = []
        with self.assertRaises(StopIteration):
            while True:
                got.append(next(it))
                clock.t += 0.010  # 10 ms of compute
        self.assertEqual(len(got), 4)
        recorder.flush()
        m = sent[-1]
        self.assertEqual((m["steps"], m["samples"], m["batchSeen"], m["batchAsked"]), (3, 384, 96, 128))
        self.assertAlmostEqual(m["dataWaitMs"], 90.0, places=6)
        self.assertAlmostEqual(m["stepMs"], 120.0, places=6)

    def test_errors_pass_through_and_wrapping_is_idempotent(self):
        recorder = StepRecorder(lambda m: None)

        class Broken:
            def __next__(self):
                raise ValueError("bad sample")

        wrap_iterator_class(Broken, recorder)
        wrapped = Broken.__next__
        wrap_iterator_class(Broken, recorder)
        self.assertIs(Broken.__next__, wrapped)
        with self.assertRaisesRegex(ValueError, "bad sample"):
            next(Broken())

    def test_first_dim_and_asked(self):
        self.assertEqual(_first_dim({"input_ids": Shaped(8, 512)}), 8)
        self.assertEqual(_first_dim([[Shaped(4)]]), 4)
        self.assertIsNone(_first_dim(Shaped()))
        self.assertIsNone(_first_dim("text"))
        self.assertEqual(asked_batch({"GPUMEM_BATCH": "64"}), 64)
        self.assertIsNone(asked_batch({"GPUMEM_BATCH": "x"}))
        self.assertIsNone(asked_batch({}))

    def test_loader_settings_of_the_latest_iterator(self):
        sent = []
        recorder = StepRecorder(sent.append)

        class It:
            def __init__(self, workers, pin):
                self._num_workers, self._pin_memory, self._persistent_workers = workers, pin, False
                self._prefetch_factor = 2 if workers else None

            def __next__(self):
                return Shaped(8)

        wrap_iterator_class(It, recorder)
        first, second = It(2, False), It(6, True)
        next(first)
        next(first)
        recorder.flush()
        self.assertEqual(sent[-1]["loader"], {"numWorkers": 2, "pinMemory": False, "persistentWorkers": False, "prefetchFactor": 2})
        next(second)
        recorder.flush()
        self.assertEqual(sent[-1]["loader"]["numWorkers"], 6)
        self.assertIs(sent[-1]["loader"]["pinMemory"], True)
        # An iterator without torch's attributes says nothing rather than something wrong.
        self.assertEqual(loader_settings(object()), {"numWorkers": None, "pinMemory": None, "persistentWorkers": None, "prefetchFactor": None})
        self.assertGreaterEqual(sent[-1]["cpuCount"], 1)

    def test_tokens_from_integer_2d_ids(self):
        class Ids(Shaped):
            def __init__(self, dtype, *shape):
                Shaped.__init__(self, *shape)
                self.dtype = dtype

        self.assertEqual(_tokens({"input_ids": Ids("torch.int64", 8, 512), "labels": Ids("torch.int64", 8)}), 4096)
        self.assertEqual(_tokens((Ids("torch.int32", 4, 128), Ids("torch.int64", 4))), 512)
        self.assertIsNone(_tokens({"pixel_values": Ids("torch.float32", 8, 512)}))
        self.assertIsNone(_tokens(Ids("torch.float32", 8, 512)))
        self.assertIsNone(_tokens(Ids("torch.int64", 8, 3, 32)))
        self.assertIsNone(_tokens(Ids("torch.bool", 8, 512)))
        self.assertIsNone(_tokens("text"))
        sent = []
        recorder = StepRecorder(sent.append)
        recorder.fetched(0.0, 0.001, {"input_ids": Ids("torch.int64", 2, 16)})
        recorder.fetched(0.010, 0.011, {"input_ids": Ids("torch.int64", 2, 16)})
        recorder.flush()
        self.assertEqual((sent[-1]["tokens"], sent[-1]["samples"]), (64, 4))
        recorder = StepRecorder(sent.append)
        recorder.fetched(0.0, 0.001, Shaped(4, 3))
        recorder.fetched(0.010, 0.011, Shaped(4, 3))
        recorder.flush()
        self.assertIsNone(sent[-1]["tokens"])

    def test_optimizer_steps_bound_a_loop_without_a_dataloader(self):
        sent = []
        recorder = StepRecorder(sent.append)
        recorder.copied(100, 0.5, False, False)  # before the first boundary: set-up, not counted
        for i in range(6):
            recorder.optimizer_stepped(0.030 * i)
            recorder.copied(10, 0.001, False, False)
        recorder.fetched(0.2, 0.25, Shaped(8))  # a validation DataLoader afterwards changes nothing
        recorder.flush()
        m = sent[-1]
        self.assertEqual((m["boundary"], m["steps"], m["dataWaitMs"], m["samples"], m["batchSeen"]), ("optimizer", 5, 0, 0, None))
        self.assertAlmostEqual(m["stepMs"], 150.0, places=6)
        self.assertEqual((m["copies"]["count"], m["copies"]["bytes"]), (5, 50))

    def test_a_dataloader_seen_first_keeps_the_fetch_boundaries(self):
        sent = []
        recorder = StepRecorder(sent.append)
        recorder.fetched(0.0, 0.001, Shaped(8))
        recorder.optimizer_stepped(0.005)
        recorder.fetched(0.010, 0.011, Shaped(8))
        recorder.flush()
        self.assertEqual((sent[-1]["boundary"], sent[-1]["steps"]), ("dataloader", 1))


if __name__ == "__main__":
    unittest.main()
