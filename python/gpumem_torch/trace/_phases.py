"""Where the step is: phase (forward/backward/optimizer/other), step number and the module being run.

Phases come from hooks PyTorch offers globally: module forward hooks, optimizer step hooks, and wrappers
around ``torch.autograd.backward``/``grad``. Steps end when an optimizer step ends (or, with ``--entry``,
when the step function returns).
"""
import contextlib
import weakref

import torch


class StepState:
    """Phase, step and module stack, plus what ends the trace."""

    def __init__(self, steps, on_step_end):
        self.phase = "other"
        self.step = 0
        self.steps = steps
        self.on_step_end = on_step_end
        self.on_optimizer = None
        self.on_optimizer_done = None
        self.finished = False
        self.stack = []
        self.names = weakref.WeakKeyDictionary()
        self.roots = []
        self.optimizers = weakref.WeakSet()
        self.step_ended_by_optimizer = True
        self.on_new_root = None

    def module_path(self):
        if self.phase == "backward":
            node = torch._C._current_autograd_node()
            return "backward of %s" % type(node).__name__ if node is not None else "backward"
        if self.phase == "optimizer":
            return "optimizer"
        return self.stack[-1] if self.stack else None

    def _name_of(self, module):
        name = self.names.get(module)
        if name is None:
            # A module not seen under a known root becomes a root itself; its children are named from it.
            self.roots.append(weakref.ref(module))
            if self.on_new_root is not None:
                self.on_new_root(module)
            for child_name, child in module.named_modules():
                self.names.setdefault(child, child_name or type(module).__name__)
            name = self.names[module]
        return name

    def forward_pre(self, module, args):
        if self.phase not in ("backward", "optimizer"):
            self.phase = "forward"
        self.stack.append(self._name_of(module))

    def forward_post(self, module, args, output):
        if self.stack:
            self.stack.pop()

    def optimizer_pre(self, optimizer, args, kwargs):
        self.optimizers.add(optimizer)
        if self.on_optimizer is not None:
            self.on_optimizer(optimizer)
        self.phase = "optimizer"

    def optimizer_post(self, optimizer, args, kwargs):
        self.phase = "other"
        if self.on_optimizer_done is not None:
            self.on_optimizer_done(self.step)
        if self.step_ended_by_optimizer:
            self.end_step()

    def end_step(self):
        self.step += 1
        if not self.finished:
            self.on_step_end(self.step)

    @contextlib.contextmanager
    def in_backward(self):
        before = self.phase
        self.phase = "backward"
        try:
            yield
        finally:
            self.phase = "other" if before == "forward" else before


def install_hooks(stack, state):
    """Registers the global hooks for the lifetime of ``stack``."""
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    for handle in (register_module_forward_pre_hook(state.forward_pre),
                   register_module_forward_hook(state.forward_post),
                   register_optimizer_step_pre_hook(state.optimizer_pre),
                   register_optimizer_step_post_hook(state.optimizer_post)):
        stack.callback(handle.remove)
    for owner, name in ((torch.autograd, "backward"), (torch.autograd, "grad")):
        original = getattr(owner, name)

        def wrapped(*args, __original=original, **kwargs):
            with state.in_backward():
                return __original(*args, **kwargs)

        setattr(owner, name, wrapped)
        stack.callback(setattr, owner, name, original)
