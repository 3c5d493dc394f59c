"""Fake torch 2.4.1 for gpumem's companion tests (see ../../_fake_core.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _fake_modules import install  # noqa: E402

import sys
def history(fake):
    def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None):
        fake.history = (max_entries, []) if enabled else None
    return _record_memory_history
FEATURES = dict(history=history, top_level_oom=True)

install(sys.modules[__name__], "2.4.1", FEATURES)
del sys.path[0]
