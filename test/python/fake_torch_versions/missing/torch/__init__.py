"""Fake torch 1.12.0+stripped for gpumem's companion tests (see ../../_fake_core.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _fake_modules import install  # noqa: E402

FEATURES = dict(observer=False, lazy_call=False, uuid=False, history=None)

install(sys.modules[__name__], "1.12.0+stripped", FEATURES)
del sys.path[0]
