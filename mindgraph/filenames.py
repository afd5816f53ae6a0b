"""File names that every system can hold: Windows device names and a cut in UTF-8 bytes.

Used wherever a name from outside becomes a file in raw/: `pull` (a note app's titles,
adapters/base.py) and the documents API (documents/files.py), so a vault written on Linux
still syncs to Windows and macOS.
"""

from __future__ import annotations

# CON, PRN, AUX, NUL, COM0-9, LPT0-9 (and the superscript-digit forms Windows also reserves),
# CONIN$ and CONOUT$: with any extension ("nul.txt", "COM1.md") Windows opens the device.
WINDOWS_DEVICE_NAMES = frozenset({
    "con", "prn", "aux", "nul", "conin$", "conout$",
    *(f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789\u00b9\u00b2\u00b3")})

MAX_NAME_BYTES = 255     # one path component on ext4, APFS, NTFS (UTF-16 units there: fewer)


def is_windows_device_name(name: str) -> bool:
    """Whether Windows takes the file name ``name`` for a device (``aux``, ``COM1.md``)."""
    return name.split(".", 1)[0].rstrip(" ").casefold() in WINDOWS_DEVICE_NAMES


def cut_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` of UTF-8, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max(max_bytes, 0)].decode("utf-8", errors="ignore")


__all__ = ["MAX_NAME_BYTES", "WINDOWS_DEVICE_NAMES", "cut_utf8", "is_windows_device_name"]
