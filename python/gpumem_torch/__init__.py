"""gpumem_torch: PyTorch's own view of GPU memory, for gpumem and for training scripts.

Importing this package does not import torch; each function imports it when called. See docs/companion.md;
``%load_ext gpumem_torch`` in IPython/Jupyter: docs/notebooks.md.
"""
from .api import (
    MemoryBlock,
    clear_cuda_memory,
    memory_info,
    print_memory_info,
    release_model,
    reset_peak,
    set_memory_fraction,
    to_cpu,
    track_memory,
)
from .logger import StepLogger
from .notebook import load_ipython_extension, unload_ipython_extension

__version__ = "0.1.0"

__all__ = [
    "MemoryBlock",
    "StepLogger",
    "clear_cuda_memory",
    "memory_info",
    "print_memory_info",
    "release_model",
    "reset_peak",
    "set_memory_fraction",
    "to_cpu",
    "track_memory",
]
