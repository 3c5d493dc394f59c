"""The companion's settings, read from the environment variables the gpumem supervisor sets.

Documented in docs/companion.md. A malformed value disables only the feature it controls and is reported.
"""
import os

SCHEMA_VERSION = 1
ENV_CHANNEL = "GPUMEM_COMPANION_CHANNEL"
ENV_RATE_HZ = "GPUMEM_COMPANION_RATE_HZ"
ENV_SNAPSHOT_DIR = "GPUMEM_COMPANION_SNAPSHOT_DIR"
ENV_SNAPSHOT_MAX_ENTRIES = "GPUMEM_COMPANION_SNAPSHOT_MAX_ENTRIES"
ENV_MEMORY_FRACTION = "GPUMEM_COMPANION_MEMORY_FRACTION"
ENV_STEP_MEMORY = "GPUMEM_COMPANION_STEP_MEMORY"

DEFAULT_RATE_HZ = 10.0
MAX_RATE_HZ = 100.0
DEFAULT_SNAPSHOT_MAX_ENTRIES = 20000
# A run that OOMs in a loop (caught and retried) must not fill the disk with snapshots.
MAX_SNAPSHOTS_PER_PROCESS = 3


class Config:
    """Parsed settings plus the problems found while parsing (each a (what, message) pair)."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.problems = []
        self.channel = env.get(ENV_CHANNEL) or None
        self.rate_hz = self._number(env, ENV_RATE_HZ, DEFAULT_RATE_HZ, 0.0, MAX_RATE_HZ)
        self.snapshot_dir = env.get(ENV_SNAPSHOT_DIR) or None
        entries = self._number(env, ENV_SNAPSHOT_MAX_ENTRIES, DEFAULT_SNAPSHOT_MAX_ENTRIES, 1, 10_000_000)
        self.snapshot_max_entries = int(entries)
        self.memory_fraction = self._number(env, ENV_MEMORY_FRACTION, None, 0.0, 1.0, low_open=True)
        # Per-step peaks (and their reset) unless turned off: "0" off, anything else on.
        self.step_memory = env.get(ENV_STEP_MEMORY, "1").strip() != "0"

    def _number(self, env, name, default, low, high, low_open=False):
        text = env.get(name)
        if text is None or text == "":
            return default
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or value != value or value > high or value < low or (low_open and value == low):
            self.problems.append(("config", "%s=%r is not a number in %s%s, %s]" % (
                name, text, "(" if low_open else "[", low, high)))
            return default
        return value

    def as_message(self):
        """The settings as they appear in the hello message."""
        return {
            "rateHz": self.rate_hz,
            "snapshotDir": self.snapshot_dir,
            "snapshotMaxEntries": self.snapshot_max_entries,
            "memoryFraction": self.memory_fraction,
            "stepMemory": self.step_memory,
        }
