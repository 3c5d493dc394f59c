"""The target GPU's CUDA compute capability, from the name ``gpumem estimate --gpu`` passed.

Kernel choices that differ between GPUs (which attention kernel runs, whether bfloat16 exists) depend on the
compute capability, not on the memory size. Figures are NVIDIA's published compute capabilities ("CUDA GPUs -
Compute Capability", developer.nvidia.com/cuda-gpus). A name that matches nothing (a bare size such as 24GiB)
keeps the H100's 9.0, what the tracer assumed before, and the trace says so.
"""
import re

# (pattern on the upper-cased name, capability). Checked in order: the first match wins.
_RULES = (
    (r"\bGB300\b|\bB300\b", (10, 3)),
    (r"\bGB200\b|\bB200\b|\bB100\b", (10, 0)),
    (r"RTX[- ]?50\d\d|RTX[- ]PRO[- ]\d+|BLACKWELL", (12, 0)),
    (r"\bGH200\b|\bH200\b|\bH100\b|\bH800\b|\bH20\b", (9, 0)),
    (r"\bL4\b|\bL40S?\b|RTX[- ]?40\d\d|\bADA\b", (8, 9)),
    (r"\bA100\b|\bA800\b|\bA30\b", (8, 0)),
    (r"\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|RTX[- ]A\d{4}|RTX[- ]?30\d\d", (8, 6)),
    (r"\bT4\b|RTX[- ]?20\d\d|QUADRO[- ]RTX|TITAN[- ]RTX", (7, 5)),
    (r"\bV100S?\b|TITAN[- ]V\b", (7, 0)),
    (r"\bP100\b", (6, 0)),
    (r"\bP40\b|\bP4\b|GTX[- ]?10\d\d", (6, 1)),
)

ASSUMED = (9, 0)


def capability_of(name):
    """(major, minor) for a GPU name such as "H100-80GB", "RTX-3090-24GB" or "NVIDIA A100-SXM4-40GB"; None if unknown."""
    text = str(name or "").upper().replace("_", "-")
    for pattern, capability in _RULES:
        if re.search(pattern, text):
            return capability
    return None


class Target:
    """What the traced step's kernel choices depend on: the GPU's compute capability and the torch release."""

    def __init__(self, capability, release):
        self.capability = tuple(capability)
        self.release = tuple(release)


def installed_release(version):
    """(major, minor) of a torch version string such as "2.11.0+cu130"; (2, 0) when unreadable."""
    try:
        major, minor = version.split("+")[0].split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return 2, 0
