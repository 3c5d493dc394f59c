"""A Hugging Face ``transformers`` ``TrainerCallback`` that logs GPU memory per step through the Trainer's own
logging: allocated, reserved, the step's peaks, step and data-wait times and the OOM forecast appear next to the
loss in every logger the Trainer reports to (TensorBoard, W&B, MLflow, …), in ``state.log_history`` and in
``trainer_state.json``; at an OOM it writes the allocator's numbers, the forecast and a snapshot into the
Trainer's logging folder. Importable only where ``transformers`` is. See docs/training-loop.md.

    from gpumem_torch.huggingface import GpumemCallback
    trainer = Trainer(...)
    GpumemCallback.add_to(trainer)
"""
from transformers import TrainerCallback

from ._train_log import TrainingMemoryLog


class GpumemCallback(TrainerCallback):
    """Adds ``gpumem/…`` figures to each log of the Trainer; see the module docstring."""

    def __init__(self, within_steps=1000, check_spikes=True):
        self.within_steps = within_steps
        self.check_spikes = check_spikes
        self.log = None

    @classmethod
    def add_to(cls, trainer, **options):
        """Adds the callback first, so the reporting callbacks that come before user callbacks see its figures."""
        callback = cls(**options)
        trainer.callback_handler.callbacks.insert(0, callback)
        return callback

    def on_train_begin(self, args, state, control, **kwargs):
        import torch
        self.log = TrainingMemoryLog(torch, self.within_steps, self.check_spikes)
        try:
            self.log.watch_ooms(getattr(args, "logging_dir", None) or args.output_dir)  # logging_dir: transformers < 5
        except Exception:
            pass  # without the observer the training still runs; only the OOM report is lost

    def on_step_end(self, args, state, control, **kwargs):
        if self.log is not None:
            self.log.step_ended()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.log is None or logs is None or "loss" not in logs:
            return  # evaluation and end-of-training summaries carry no step figures
        metrics = self.log.metrics(global_step=state.global_step)
        logs.update(metrics)
        # The Trainer appended its copy of these logs to the history just before calling the callbacks.
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(metrics)
