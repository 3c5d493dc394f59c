"""Benchmark workload: one training step of a ViT-B/16 (Hugging Face, random weights from its config) at batch 32,
224×224, fp32, AdamW."""
import torch
import torch.nn.functional as F
from transformers import ViTConfig, ViTForImageClassification

config = ViTConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                   image_size=224, patch_size=16, num_labels=1000)
config._attn_implementation = "sdpa"
model = ViTForImageClassification(config).to(device="cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(10):
    x = torch.randn(32, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (32,), device="cuda")
    F.cross_entropy(model(pixel_values=x).logits, y).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
