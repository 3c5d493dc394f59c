"""``python -m gpumem_torch.trace pkg.module:make_step``: trace a step function instead of a whole script.

``make_step()`` returns ``(model, batch, step)``; ``step(model, batch)`` runs one training step. The tracer
(armed by gpumem's sitecustomize) records N calls of it.
"""
import importlib
import sys


def main(argv):
    if len(argv) != 1 or ":" not in argv[0]:
        raise SystemExit("usage: python -m gpumem_torch.trace pkg.module:make_step")
    module_name, _, attr = argv[0].partition(":")
    import torch  # noqa: F401  (starts the tracer through the import hook)
    from . import tracer

    active = tracer()
    if active is None:
        raise SystemExit("gpumem estimate --entry: the tracer is not armed (run it through gpumem estimate)")
    make_step = getattr(importlib.import_module(module_name), attr)
    model, batch, step = make_step()
    active.state.step_ended_by_optimizer = False
    while True:
        step(model, batch)
        active.state.end_step()


if __name__ == "__main__":
    main(sys.argv[1:])
