"""Activation checkpointing applied by the tracer, to number the fix "checkpoint every block" with a real trace.

Asked for with ``GPUMEM_ESTIMATE_CHECKPOINT=1``. When a model's first forward starts:
- a transformers model that supports it gets ``gradient_checkpointing_enable()``, what its user would call;
- any other model gets ``torch.utils.checkpoint.checkpoint`` (non-reentrant) around each of its repeated
  blocks: the module class that appears at least twice as a child of an ``nn.Sequential``/``nn.ModuleList``
  and whose instances hold the most parameters (ResNet's bottlenecks, a transformer's layers).
What was done is written into the trace as a note, so the report can say what the number assumes.
"""
import collections
import functools

import torch
import torch.utils.checkpoint


def choose_blocks(root):
    """The repeated blocks of ``root`` worth checkpointing (a list of modules, possibly empty)."""
    by_class = collections.defaultdict(list)
    for container in root.modules():
        if isinstance(container, (torch.nn.Sequential, torch.nn.ModuleList)):
            for child in container.children():
                by_class[type(child)].append(child)
    best, best_params = [], 0
    for blocks in by_class.values():
        if len(blocks) < 2:
            continue
        params = sum(p.numel() for b in blocks for p in b.parameters())
        if params > best_params:
            best, best_params = blocks, params
    return best


def _checkpointed(forward):
    @functools.wraps(forward)
    def run(*args, **kwargs):
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        return torch.utils.checkpoint.checkpoint(forward, *args, use_reentrant=False, **kwargs)

    return run


def apply_checkpointing(root, note):
    """Turns checkpointing on for ``root`` before its first forward; ``note`` receives what was done."""
    # transformers 5 renamed gradient_checkpointing_* to activation_checkpointing_* (the old names warn).
    for enable, enabled in (("activation_checkpointing_enable", "is_activation_checkpointing"),
                            ("gradient_checkpointing_enable", "is_gradient_checkpointing")):
        if getattr(root, "supports_gradient_checkpointing", False) and hasattr(root, enable):
            if getattr(root, enabled, False):
                note("activation checkpointing: the program already checkpoints %s" % type(root).__name__)
                return
            getattr(root, enable)()
            note("activation checkpointing: %s.%s()" % (type(root).__name__, enable))
            return
    blocks = choose_blocks(root)
    if not blocks:
        if any(True for _ in root.parameters()):
            note("activation checkpointing: %s has no repeated blocks to checkpoint" % type(root).__name__)
        return
    for block in blocks:
        block.forward = _checkpointed(block.forward)
    note("activation checkpointing: torch.utils.checkpoint around each of %d %s blocks"
         % (len(blocks), type(blocks[0]).__name__))
