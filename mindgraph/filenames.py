"""File names that every system can hold: Windows device names, a cut in UTF-8 bytes, no
invisible format characters, and the key under which two names are one file somewhere.

Used wherever a name from outside becomes a file in raw/: `pull` (a note app's titles,
adapters/base.py) and the documents API (documents/files.py), so a vault written on Linux
still syncs to Windows and macOS.

Invisible format characters (Unicode category Cf), class by class (``drop_invisible``):

- dropped: the bidi marks U+200E LRM, U+200F RLM, U+061C ALM (they reorder what is shown, so
  two names that look alike are two files, or a name reads as another), U+FEFF (a byte-order
  mark or zero-width no-break space), U+200B zero-width space, U+2060 word joiner, the
  invisible maths operators U+2061-2064, the deprecated U+206A-206F, the soft hyphen U+00AD,
  the interlinear annotation marks U+FFF9-FFFB, the shorthand and musical format controls
  (U+1BCA0-1BCA3, U+1D173-1D17A), the language tag U+E0001, and tag characters U+E0020-E007F
  except in an emoji flag sequence (U+1F3F4 ... U+E007F, the flag of Scotland): elsewhere
  they carry invisible ASCII, text a reader of the name cannot see;
- kept only where they join: U+200D ZWJ and U+200C ZWNJ, between two letters, marks or
  symbols (the emoji 👨‍👩‍👧 is three people and two ZWJ; Persian and the Indic scripts spell
  words with them), dropped at an edge, beside a space or punctuation, or doubled;
- kept: the visible ones (the Arabic, Syriac and Kaithi number and end-of-ayah signs
  U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+110BD, U+110CD), U+180E Mongolian vowel
  separator and the Egyptian hieroglyph format controls U+13430-1343F (the scripts' shaping
  needs them);
- the bidi embeddings, overrides and isolates U+202A-202E and U+2066-2069 are no business of
  this module: adapters/base.py turns them into ``_`` with the control characters.

``collision_key`` is what two names have in common when some system takes them for one file:
APFS and HFS+ (case- and normalisation-insensitive; HFS+ also ignores some format
characters), NTFS (case-insensitive by its own upper-case table). It is stricter than any of
them (``Straße`` and ``Strasse`` are one key though NTFS keeps both), since two names that
might meet cost one a longer name, and two that do meet cost a note.
"""

from __future__ import annotations

import re
import unicodedata

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


# Format characters dropped from names wherever they are (tag characters: see _FLAG_RE).
DROPPED_FORMAT_CHARS = ("\u00ad\u061c\u200b\u200e\u200f\u2060-\u2064\u206a-\u206f\ufeff"
                        "\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001")
# Format characters kept: visible signs, and the shaping controls of Mongolian and hieroglyphs.
KEPT_FORMAT_CHARS = ("\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u180e\U000110bd"
                     "\U000110cd\U00013430-\U0001343f")
JOINERS = "\u200c\u200d"     # ZWNJ, ZWJ: kept only between two letters, marks or symbols
TAG_CHARS = "\U000e0020-\U000e007f"
_DROPPED_RE = re.compile(f"[{DROPPED_FORMAT_CHARS}{TAG_CHARS}]")
_FLAG_RE = re.compile(f"(\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f)")
# what some file system ignores or folds, beyond case: every format character, the variation
# selectors and the combining grapheme joiner (HFS+ skips several of them when it compares)
_IGNORED_RE = re.compile(f"[\u00ad\u034f\u061c\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                         f"\u2060-\u206f\ufe00-\ufe0f\ufeff\U000e0000-\U000e0fff]")


def drop_invisible(text: str) -> str:
    """``text`` without the invisible format characters a file name must not hold (the
    module's docstring lists them, class by class); ZWJ and ZWNJ stay where they join."""
    pieces = _FLAG_RE.split(text)       # odd pieces: whole emoji flag tag sequences, kept
    text = "".join(piece if n % 2 else _DROPPED_RE.sub("", piece)
                   for n, piece in enumerate(pieces))
    if "\u200c" not in text and "\u200d" not in text:
        return text
    kept: list[str] = []
    for n, char in enumerate(text):
        if char in JOINERS and not (kept and _joins(kept[-1])
                                    and n + 1 < len(text) and _joins(text[n + 1])):
            continue
        kept.append(char)
    return "".join(kept)


def _joins(char: str) -> bool:
    """A letter, mark or symbol: what a ZWJ or ZWNJ may stand between."""
    return unicodedata.category(char)[0] in "LMS"


def collision_key(name: str) -> str:
    """The form two names share when a case- or normalisation-insensitive file system (APFS,
    HFS+, NTFS) may open one file for both: canonical decomposition, full upper case then
    full case folding (``ǅ``, ``Ǆ`` and ``ǆ``; final and medial sigma; ``ß`` and ``ss``;
    dotless ``ı`` and ``i``), without format characters and variation selectors."""
    text = unicodedata.normalize("NFD", name)
    text = unicodedata.normalize("NFD", text.upper().casefold())
    return _IGNORED_RE.sub("", text)


__all__ = ["DROPPED_FORMAT_CHARS", "JOINERS", "KEPT_FORMAT_CHARS", "MAX_NAME_BYTES", "TAG_CHARS",
           "WINDOWS_DEVICE_NAMES", "collision_key", "cut_utf8", "drop_invisible",
           "is_windows_device_name"]
