"""A real Lightning Trainer on the CPU with gpumem_torch's callback, a CSVLogger and a TensorBoardLogger: a tiny
regression model, a dataset whose items take 3 ms each to load, 12 optimizer steps of batches of 4 (a second
argument: that many batches accumulated per step), every step logged.
Prints, as one JSON line, what the two loggers wrote, read back from their files: the rows of metrics.csv and the
scalars of the TensorBoard event files (tensorboard's own reader), each as {name: {step: value}}, and the folder the
callback writes OOM files into.

With GPUMEM_TEST_COUNTERS=leak, torch's allocator counters (which this CPU build lacks) are replaced by a stand-in
before the callback is made: every training step leaves LEAK bytes more allocated than the one before and peaks
SPIKE bytes above what it leaves, on a device of TOTAL bytes, so the memory figures and the forecast travel the
same path into the loggers as they would on a GPU."""
import csv
import glob
import json
import os
import sys
import time

import lightning
import torch
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from gpumem_torch.lightning import GpumemCallback

MiB = 1 << 20
BASE, LEAK, SPIKE, TOTAL = 512 * MiB, 4 * MiB, 64 * MiB, 1024 * MiB


class Counters:
    """The caching allocator's counters for one device, as torch._C reports them (nested), and their peak reset."""

    def __init__(self):
        self.allocated = self.peak_allocated = BASE
        self.reserved = self.peak_reserved = BASE

    def step(self):
        self.peak_allocated = max(self.peak_allocated, self.allocated + SPIKE)
        self.peak_reserved = max(self.peak_reserved, self.allocated + SPIKE)
        self.allocated += LEAK
        self.reserved = max(self.reserved, self.allocated)

    def stats(self, device=None):
        return {"allocated_bytes": {"all": {"current": self.allocated, "peak": self.peak_allocated}},
                "reserved_bytes": {"all": {"current": self.reserved, "peak": self.peak_reserved}}}

    def reset(self, device=None):
        self.peak_allocated, self.peak_reserved = self.allocated, self.reserved

    def install(self):
        torch._C._cuda_memoryStats = self.stats
        torch._C._cuda_resetPeakMemoryStats = self.reset
        torch.cuda.is_initialized = lambda: True
        torch.cuda.memory.is_initialized = torch.cuda.is_initialized
        torch.cuda.current_device = lambda: 0
        torch.cuda.mem_get_info = lambda device=None: (TOTAL - self.reserved, TOTAL)


counters = Counters() if os.environ.get("GPUMEM_TEST_COUNTERS") == "leak" else None
if counters:
    counters.install()

out_dir = sys.argv[1]
# 40 steps with the stand-in: the forecast wants 20 before it names a growth.
STEPS = 40 if os.environ.get("GPUMEM_TEST_COUNTERS") == "leak" else 12
ACCUMULATE = int(sys.argv[2]) if len(sys.argv) > 2 else 1  # batches per optimizer step


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 4 * STEPS * ACCUMULATE

    def __getitem__(self, i):
        time.sleep(0.003)
        x = torch.full((8,), float(i % 7))
        return x, x.sum().unsqueeze(0)


class Model(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.linear(x), y)
        if counters:
            counters.step()
        self.log("train_loss", loss, on_step=True, on_epoch=False)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3)


gpumem = GpumemCallback()
csv_logger = CSVLogger(out_dir, name="csv")
tb_logger = TensorBoardLogger(out_dir, name="tb")
trainer = lightning.Trainer(accelerator="cpu", devices=1, max_steps=STEPS, log_every_n_steps=1,
                            accumulate_grad_batches=ACCUMULATE,
                            logger=[csv_logger, tb_logger], callbacks=[gpumem],
                            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(Model(), torch.utils.data.DataLoader(Slow(), batch_size=4, num_workers=0))

csv_rows = {}
with open(os.path.join(csv_logger.log_dir, "metrics.csv")) as handle:
    for row in csv.DictReader(handle):
        for name, value in row.items():
            if name != "step" and value != "":
                csv_rows.setdefault(name, {})[row["step"]] = float(value)

events = sorted(glob.glob(os.path.join(tb_logger.log_dir, "events.out.tfevents.*")))
tb = {}
for path in events:
    acc = EventAccumulator(path)
    acc.Reload()
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            tb.setdefault(tag, {})[str(e.step)] = e.value
print(json.dumps({"csv": csv_rows, "tensorboard": tb, "event_files": len(events), "log_dir": trainer.log_dir,
                  "oom_folder": gpumem.log.log_dir}))
