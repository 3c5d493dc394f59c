"""A Lightning ``Callback`` that logs GPU memory per optimizer step through the LightningModule's own ``log_dict``,
so every logger the Trainer has (CSV, TensorBoard, W&B, MLflow, …) receives allocated, reserved, the step's peaks,
step and data-wait times and the OOM forecast; at an OOM it writes the allocator's numbers, the forecast and a
snapshot into the Trainer's log folder. Importable only where ``lightning`` (or ``pytorch_lightning``) is.
See docs/training-loop.md.

    from gpumem_torch.lightning import GpumemCallback
    trainer = lightning.Trainer(callbacks=[GpumemCallback()], ...)
"""
try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback

from ._train_log import TrainingMemoryLog


class GpumemCallback(Callback):
    """Logs ``gpumem/…`` figures after each optimizer step; see the module docstring."""

    def __init__(self, within_steps=1000, check_spikes=True):
        super().__init__()
        self.within_steps = within_steps
        self.check_spikes = check_spikes
        self.log = None
        self.global_step = None

    def on_train_start(self, trainer, pl_module):
        import torch
        self.log = TrainingMemoryLog(torch, self.within_steps, self.check_spikes)
        self.global_step = trainer.global_step
        try:
            self.log.watch_ooms(trainer.log_dir or trainer.default_root_dir)
        except Exception:
            pass

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        # With gradient accumulation several batches make one optimizer step: log once per step.
        if self.log is None or trainer.global_step == self.global_step:
            return
        self.global_step = trainer.global_step
        self.log.step_ended()
        metrics = self.log.metrics(global_step=trainer.global_step)
        if metrics:
            pl_module.log_dict({k: float(v) for k, v in metrics.items()}, on_step=True, on_epoch=False)
