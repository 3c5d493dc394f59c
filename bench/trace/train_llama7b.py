"""Benchmark workload: one training step of a Llama-2-7B-shaped model at sequence 4096, bf16 weights, AdamW."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_attention_heads=32, num_key_value_heads=32,
                     num_hidden_layers=32, vocab_size=32000, max_position_embeddings=4096)
config._attn_implementation = "sdpa"
model = LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16)
model.gradient_checkpointing_enable()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for _ in range(10):
    ids = torch.randint(0, 32000, (1, 4096), device="cuda")
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
