"""A small Llama (transformers, built from a config, no download) trained one step with FSDP2: every decoder
layer wrapped with fully_shard, then the root, the usual recipe. For `gpumem estimate --world-size N` (the
fake process group and fake tensors), so the per-rank peak can be compared with config mode's FSDP rule on the
same model (`--write-config DIR` writes the config.json that config mode reads).

Usage: fsdp_llama.py [--bf16] [--batch B] [--seq S] [--steps S] [--write-config DIR]
"""
import argparse
import os

import torch
import torch.distributed as dist
from transformers import LlamaConfig, LlamaForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--bf16", action="store_true")
p.add_argument("--batch", type=int, default=1)
p.add_argument("--seq", type=int, default=8)
p.add_argument("--steps", type=int, default=2)
p.add_argument("--write-config")
a = p.parse_args()

# Wide layers and a short sequence: the per-rank peak is dominated by the sharded states and FSDP's
# unsharded layers, not by activations.
config = LlamaConfig(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                     num_key_value_heads=8, vocab_size=1024, max_position_embeddings=256, tie_word_embeddings=False,
                     attn_implementation="eager")
if a.write_config:
    config.to_json_file(os.path.join(a.write_config, "config.json"))
    raise SystemExit(0)

dist.init_process_group("gloo")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
with torch.device(device):
    model = LlamaForCausalLM(config)

from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if a.bf16 else MixedPrecisionPolicy()
for layer in model.model.layers:
    fully_shard(layer, mp_policy=policy)
fully_shard(model, mp_policy=policy)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
for _ in range(a.steps):
    ids = torch.randint(0, config.vocab_size, (a.batch, a.seq), device=device)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
