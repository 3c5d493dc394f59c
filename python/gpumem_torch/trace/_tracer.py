"""Puts the pieces together: fake tensors, the CUDA-to-CPU rewrite, the recorder and the step hooks."""
import contextlib
import gc
import platform
import time

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from ._backward_modes import keep_mode_in_backward
from ._capability import ASSUMED, Target, capability_of, installed_release
from ._autocast import install_cuda_autocast_policy
from ._devices import CudaToCpuMode, patch_torch_cuda
from ._phases import StepState, install_hooks
from ._recorder import Recorder
from ._release import Release
from ._values import install_value_free_init


class Tracer:
    def __init__(self, torch_module, writer, steps, gpu_name, gpu_bytes, on_done, checkpoint=False, release=None, world=None):
        self.writer = writer
        self.release = Release(release, writer)
        self.state = StepState(steps, self._step_end)
        self.recorder = Recorder(writer, self.state)
        self.stack = contextlib.ExitStack()
        self.gpu_name = gpu_name
        self.gpu_bytes = gpu_bytes
        self.on_done = on_done
        self.fake = None
        self.checkpoint = checkpoint
        # (rank, world size) when one rank of a distributed job is traced (_distributed.py).
        self.world = world
        self.recorder.world = world
        capability = capability_of(gpu_name)
        if capability is None:
            capability = ASSUMED
            writer.note("GPU %r: compute capability unknown, kernels chosen as on an H100 (9.0)" % gpu_name)
        self.target = Target(capability, release or installed_release(torch.__version__))

    def start(self):
        self.started = time.perf_counter()
        self._freeze_heap()
        patch_torch_cuda(self.stack, self.gpu_name, self.gpu_bytes, self.target.capability)
        install_cuda_autocast_policy(self.stack)
        install_value_free_init(self.stack)
        self.release.install(self.stack)
        install_hooks(self.stack, self.state)
        if self.world is not None:
            from ._distributed import install_fake_world
            install_fake_world(self.stack, self.world[0], self.world[1], self.writer, self.recorder)
        self.state.on_optimizer = self._prepare_optimizer
        # Tagged right after each optimizer step, before a zero_grad can drop the gradients.
        self.state.on_optimizer_done = self._tag_step
        if self.checkpoint:
            from ._checkpoint import apply_checkpointing
            self.state.on_new_root = lambda module: apply_checkpointing(module, self.writer.note)
        self.fake = FakeTensorMode(allow_non_fake_inputs=True)
        self.recorder.fake = self.fake
        self._allow_module_moves()
        self.stack.enter_context(self.fake)
        self.stack.enter_context(self.recorder)
        self.stack.enter_context(CudaToCpuMode(self.recorder, self.release, self.target))
        keep_mode_in_backward(self.stack, lambda: CudaToCpuMode(self.recorder, self.release, self.target))

    def _freeze_heap(self):
        # The recorder keeps an event and a finaliser per GPU storage, which makes Python run more full garbage
        # collections than the step alone would, and each walks every object that exists before the trace starts
        # (torch's import alone makes a few hundred thousand, ~0.2 s a pass). Those objects are exempted from
        # collection while the trace runs (garbage among them is left as it is); no fake tensor exists yet, so no
        # storage's free can wait on them.
        gc.freeze()
        self.stack.callback(gc.unfreeze)

    def _allow_module_moves(self):
        # Module.to swaps fake parameters in place, which refuses tensors the fake mode's memo refers to
        # weakly; the memo only speeds up converting real tensors, so it is emptied before each swap.
        original = torch.utils.swap_tensors
        memo = self.fake.fake_tensor_converter.meta_converter.tensor_memo

        def swap(a, b):
            memo.clear()
            return original(a, b)

        torch.utils.swap_tensors = swap
        self.stack.callback(setattr, torch.utils, "swap_tensors", original)

    def _prepare_optimizer(self, optimizer):
        # CUDA parameters make PyTorch's optimizers default to foreach (one temporary per parameter, all at
        # once); on CPU they default to a per-parameter loop. The traced step must allocate as CUDA would.
        for group in optimizer.param_groups:
            if "foreach" in group and group.get("foreach") is None and not group.get("fused"):
                group["foreach"] = True
                self.writer.note("optimizer %s: foreach=True, as PyTorch picks for CUDA parameters"
                                 % type(optimizer).__name__)

    def _step_end(self, step):
        if not self.state.step_ended_by_optimizer:
            self._tag_step(step - 1)
        if step >= self.state.steps:
            self.on_done()

    def _tag_step(self, step):
        """Marks which live storages are weights, gradients and optimizer state at the end of each step."""
        params, grads, states = [], [], []
        for ref in self.state.roots:
            module = ref()
            if module is None:
                continue
            params.extend(module.buffers())
            for p in module.parameters():
                params.append(p)
                if p.grad is not None:
                    grads.append(p.grad)
        for opt in list(self.state.optimizers):
            for st in opt.state.values():
                states.extend(v for v in st.values() if isinstance(v, torch.Tensor))
        for category, tensors in (("weights", params), ("gradients", grads), ("optimizer-state", states)):
            ids = sorted(set(self.recorder.ids_of(tensors)))
            if ids:
                self.writer.event(kind="tag", category=category, step=step, ids=ids)

    def finish(self, error):
        self.state.finished = True
        header = {"torch": torch.__version__, "python": platform.python_version(), "steps": self.state.steps,
                  "stepsDone": self.state.step, "device": "fake-cpu", "placeholders": self.recorder.placeholders,
                  "traceSeconds": round(time.perf_counter() - self.started, 3)}
        if self.world is not None:
            header["rank"], header["worldSize"] = self.world
        self.writer.finish(header, error=error)
