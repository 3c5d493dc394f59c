"""Code that decides what to do from tensor values, which fake tensors do not have.

A placeholder answers ``.item()`` and ``bool(tensor)`` (``_recorder``); that is enough for a branch, but a loop
that waits for a value never ends. PyTorch's own ``nn.init.trunc_normal_`` is such a loop in recent releases
(redraw while any value lies outside [a, b]), and Hugging Face models (ViT, DeiT, Swin …) initialise with it.
Initial values do not change what a step allocates, so under the tracer it draws once and clamps, in place:
the same tensor, no loop. Any other loop on values is stopped with an error naming the line (see
``LoopGuard``), instead of running until the trace times out.
"""
import os
import sys

import torch

# How often one line may ask a fake tensor for a value before it is taken for a loop that waits on data.
MAX_SAME_SITE = 10000


def install_value_free_init(stack):
    """Swaps torch.nn.init's truncated-normal sampler for a loop-free one until ``stack`` closes."""
    init = torch.nn.init
    name = "_no_grad_trunc_normal_"
    original = getattr(init, name, None)
    if original is None:  # pragma: no cover - every torch 2.x has it
        return

    def trunc_normal(tensor, mean, std, a, b, generator=None):
        with torch.no_grad():
            return tensor.normal_(mean, std, generator=generator).clamp_(a, b)

    setattr(init, name, trunc_normal)
    stack.callback(setattr, init, name, original)


class LoopGuard:
    """Counts value reads per source line; a line read ``MAX_SAME_SITE`` times is a loop that cannot end."""

    def __init__(self):
        self.counts = {}

    def check(self):
        from ._recorder import _SKIP_PREFIXES
        # The innermost line outside torch and gpumem: the program's (or its library's) own loop.
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_SKIP_PREFIXES):
            frame = frame.f_back
        site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
        n = self.counts.get(site, 0) + 1
        self.counts[site] = n
        if n >= MAX_SAME_SITE:
            where = "%s:%d" % (os.path.basename(site[0]), site[1]) if site else "an unknown line"
            raise RuntimeError(
                "data-dependent loop: %s read a tensor's value %d times; fake tensors have no values, so a loop "
                "that waits for one (a rejection sampler, a convergence test) never ends under the tracer"
                % (where, n))
