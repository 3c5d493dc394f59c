"""Fake torch 2.0.1 for gpumem's companion tests (see ../../_fake_core.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _fake_modules import install  # noqa: E402

def history(fake):
    def _record_memory_history(enabled, record_context=True, trace_alloc_max_entries=1,
                               trace_alloc_record_context=False, device=None, _enable_expensive_cpp=False):
        fake.history = (trace_alloc_max_entries, []) if enabled else None
    return _record_memory_history
FEATURES = dict(history=history)

install(sys.modules[__name__], "2.0.1", FEATURES)
del sys.path[0]
