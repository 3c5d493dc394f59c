"""Fake torch 1.13.1 for gpumem's companion tests (see ../../_fake_core.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _fake_modules import install  # noqa: E402

def history(fake):
    def _record_memory_history(enabled, device=None):
        fake.history = (None, []) if enabled else None
    return _record_memory_history
FEATURES = dict(observer=False, requested_key=False, uuid=False, device_traces=False, history=history, optimizer_hooks=False)

install(sys.modules[__name__], "1.13.1", FEATURES)
del sys.path[0]
