"""Another gpumem_torch earlier on the path (an older install): gpumem run must not load it."""
import sys

sys.stderr.write("impostor gpumem_torch imported\n")
