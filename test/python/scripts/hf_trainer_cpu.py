"""A real Hugging Face Trainer on the CPU with gpumem_torch's callback: a tiny regression model, a dataset whose
items take 3 ms each to load, 30 optimizer steps logged every 5. Prints the Trainer's log history as read back
from the trainer_state.json it saved, and the lines its own printing callback wrote, as one JSON line. With a second
argument `tensorboard` the Trainer also reports to TensorBoard, and the scalars of the event files it wrote are read
back with tensorboard's own reader, as {tag: {step: value}}."""
import contextlib
import glob
import io
import json
import os
import sys
import time

import torch
from transformers import Trainer, TrainingArguments

from gpumem_torch.huggingface import GpumemCallback

out_dir = sys.argv[1]
report_to = sys.argv[2:3]  # [] or ["tensorboard"]


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        time.sleep(0.003)
        x = torch.full((8,), float(i % 7))
        return {"x": x, "labels": x.sum().unsqueeze(0)}


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 1)

    def forward(self, x, labels=None):
        y = self.linear(x)
        return {"loss": torch.nn.functional.mse_loss(y, labels), "logits": y}


args = TrainingArguments(output_dir=out_dir, max_steps=30, logging_steps=5, per_device_train_batch_size=4,
                         report_to=report_to, use_cpu=True, save_strategy="no", disable_tqdm=True,
                         dataloader_num_workers=0)
trainer = Trainer(model=Model(), args=args, train_dataset=Slow())
GpumemCallback.add_to(trainer)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    trainer.train()
trainer.save_state()
with open(os.path.join(out_dir, "trainer_state.json")) as handle:
    history = json.load(handle)["log_history"]
scalars = {}
for path in sorted(glob.glob(os.path.join(out_dir, "**", "events.out.tfevents.*"), recursive=True)):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(path)
    events.Reload()
    for tag in events.Tags()["scalars"]:
        for e in events.Scalars(tag):
            scalars.setdefault(tag, {})[str(e.step)] = e.value
print(json.dumps({"history": history, "printed": printed.getvalue().splitlines(), "tensorboard": scalars}))
