"""Benchmark workload: one training step of torchvision ResNet-50 at batch 32, 224×224, SGD with momentum."""
import torch
import torch.nn.functional as F
import torchvision

model = torchvision.models.resnet50().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for _ in range(10):
    x = torch.randn(32, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (32,), device="cuda")
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
