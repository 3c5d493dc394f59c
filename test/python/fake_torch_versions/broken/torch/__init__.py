"""Fake torch 2.4.1+broken for gpumem's companion tests (see ../../_fake_core.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _fake_modules import install  # noqa: E402

def _fail(*args, **kwargs):
    raise RuntimeError("simulated failure inside torch")
def history(fake):
    return _fail
FEATURES = dict(history=history, top_level_oom=True, overrides={"_C._cuda_attach_out_of_memory_observer": _fail,
                                                                "cuda.set_per_process_memory_fraction": _fail})

install(sys.modules[__name__], "2.4.1+broken", FEATURES)
del sys.path[0]
