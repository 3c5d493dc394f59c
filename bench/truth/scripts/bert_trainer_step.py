"""Training loop shaped like the Hugging Face Trainer of early 2022 on bert-large-uncased for sequence classification.

Builds the model from bench/truth/configs/bert-large-uncased.json (no weights, no hub), feeds random token ids of
length 512 with label 0, and runs --accum micro-batches per optimizer step: autocast fp16 when --fp16, gradient
checkpointing (reentrant, as the Trainer of that time used) when --ckpt, gradient clipping at norm 1.0 (the Trainer's
default), then AdamW as a per-parameter loop (transformers' AdamW then) or Adafactor with a fixed learning rate, then
``model.zero_grad()`` as the Trainer called it (traced with --torch-version 1.10, that zeroes in place, as torch
1.x did). No attention mask is given, so BertModel of that time built an all-ones one and added its float32
extended form to the scores: the mask given here rebuilds that addition.
The fp16 GradScaler is left out: its step reads the inf flag back to the host, and its own buffers are a few bytes.
"""
import argparse
import json
import pathlib

import torch
from transformers import BertConfig, BertForSequenceClassification

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, required=True)
parser.add_argument("--accum", type=int, default=1)
parser.add_argument("--ckpt", action="store_true")
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--optim", choices=["adamw", "adafactor"], default="adamw")
args = parser.parse_args()

config_path = pathlib.Path(__file__).resolve().parent.parent / "configs" / "bert-large-uncased.json"
config = BertConfig(**json.loads(config_path.read_text()))
config._attn_implementation = "eager"
model = BertForSequenceClassification(config).cuda()
model.train()
if args.ckpt:
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
if args.optim == "adamw":
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.0, foreach=False)
else:
    from transformers.optimization import Adafactor
    optimizer = Adafactor(model.parameters(), lr=5e-5, scale_parameter=False, relative_step=False, warmup_init=False)

for _ in range(10):
    for _ in range(args.accum):
        ids = torch.randint(100, 30000, (args.batch, 512), device="cuda")
        labels = torch.zeros(args.batch, dtype=torch.long, device="cuda")
        mask = torch.ones(args.batch, 512, dtype=torch.long, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss / args.accum
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    model.zero_grad()
