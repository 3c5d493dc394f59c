"""Byte formatting identical to gpumem's own (IEC units, two decimals), so Python and CLI output agree."""

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_bytes(n):
    """Formats a byte count: ``1536`` → ``"1.50 KiB"``; ``None`` → ``"n/a"``."""
    if n is None:
        return "n/a"
    sign = "-" if n < 0 else ""
    value = float(abs(n))
    unit = 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    text = str(int(round(value))) if unit == 0 else "%.2f" % value
    return "%s%s %s" % (sign, text, _UNITS[unit])
