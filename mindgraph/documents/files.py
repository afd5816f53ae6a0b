"""Raw notes the API writes: file names made safe, the types it takes, and exclusive writes.

The API writes raw/ only here, and only new files in a folder of its own (``API_FOLDER``
inside the caller's scope folder): a file is created with O_EXCL (never over another one, so
a note that came from elsewhere is never modified), in a folder whose resolved path is inside
raw/ (no symlinked folder leads out). A name is reduced to its last component and to letters,
digits, ``-``, ``_``, ``.`` and spaces, so ``../../etc/passwd`` becomes ``passwd`` and cannot
climb. Markdown and text are written as they are; JSON, YAML and CSV become a markdown note
holding the file as a fenced data block (``mindgraph get --extract`` reads JSON and YAML ones).
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import unicodedata
from pathlib import Path
from typing import BinaryIO

from ..filenames import MAX_NAME_BYTES, cut_utf8, is_windows_device_name
from .errors import BadUpload, UploadTooLarge

API_FOLDER = "api-notes"          # the API's own folder inside a scope folder
AS_IS = (".md", ".markdown", ".txt")
WRAPPED = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".csv": "csv", ".tsv": "tsv"}
ACCEPTED = (*AS_IS, *WRAPPED)
MAX_NAME_CHARS = 120
# a stem's bytes: a file name is at most MAX_NAME_BYTES of UTF-8 (120 CJK characters are 360),
# with room for the longest ending: "-json.md" of a wrapped data file and "-9999" of write_new
_STEM_BYTES = MAX_NAME_BYTES - 16
_UNSAFE = re.compile(r"[^\w .\-]+")


def safe_name(name: str) -> str:
    """``name`` as a file name that cannot leave its folder (BadUpload when nothing usable
    is left, or its type is not one we take)."""
    original = name
    name = unicodedata.normalize("NFC", name or "").replace("\x00", "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("-", name).strip(" .-")
    name = re.sub(r"-{2,}", "-", name)
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    suffix = "." + suffix.lower() if suffix else ""
    if suffix not in ACCEPTED:
        kind = f"'{suffix}' files" if suffix else "files without an extension"
        raise BadUpload(f"{original[:200]!r}: {kind} are not taken; upload notes as "
                        f"{', '.join(ACCEPTED)}.")
    stem = cut_utf8(stem.strip(" .-")[: MAX_NAME_CHARS - len(suffix)], _STEM_BYTES)
    stem = stem.strip(" .-")
    if not stem or is_windows_device_name(stem):
        raise BadUpload(f"{original[:200]!r}: no usable file name is left once path parts "
                        f"and unsafe characters are removed; rename the file.")
    return stem + suffix


def slug(title: str) -> str:
    """A file name stem for a note titled ``title``; a Windows device name (``aux``,
    ``COM1``, ``nul.txt``: any extension) gets a ``_`` before it, as `pull` names them, and
    as an upload of such a name is refused: a vault synced to Windows cannot hold the file."""
    text = _UNSAFE.sub("-", unicodedata.normalize("NFC", title)).strip(" .-")
    text = cut_utf8(re.sub(r"[-\s]+", "-", text)[:80], _STEM_BYTES).strip("-") or "note"
    return "_" + text if is_windows_device_name(text) else text


def check_text(name: str, stream: BinaryIO, max_bytes: int,
               limit: str = "serve.upload_max_file_bytes") -> int:
    """The size of an uploaded file, read once in chunks: UploadTooLarge past ``max_bytes``
    (``limit`` says which setting that is), BadUpload when it is not UTF-8 text. The stream
    is rewound."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    size = 0
    while chunk := stream.read(1 << 20):
        if size == 0 and b"\x00" in chunk[:8192]:
            raise BadUpload(f"{name}: it holds NUL bytes, so it is not a text file; upload "
                            f"notes as text.")
        size += len(chunk)
        if size > max_bytes:
            raise UploadTooLarge(f"{name}: larger than {max_bytes} bytes ({limit}); "
                                 f"split it.")
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise BadUpload(f"{name}: not UTF-8 text (near byte {size - len(chunk) + exc.start});"
                            f" save it as UTF-8 and upload it again.") from None
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise BadUpload(f"{name}: not UTF-8 text (it ends inside a character); save it as "
                        f"UTF-8 and upload it again.") from None
    stream.seek(0)
    return size


def note_source(name: str, stream: BinaryIO) -> tuple[str, bytes | BinaryIO]:
    """The file name and content of the raw note for an uploaded file (checked with
    ``check_text``): markdown and text as they are, data files wrapped in a note."""
    suffix = Path(name).suffix.lower()
    if suffix in AS_IS:
        return name, stream
    text = stream.read().decode("utf-8-sig")
    fence = "~~~~" if "```" in text else "```"
    stem = name[: -len(suffix)]
    note = (f"---\ntitle: {_yaml_text(stem)}\nuploaded_file: {_yaml_text(name)}\n---\n"
            f"# {stem}\n\n{fence}{WRAPPED[suffix]}\n{text.rstrip(chr(10))}\n{fence}\n")
    return f"{stem}{suffix.replace('.', '-')}.md", note.encode("utf-8")


def _yaml_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_new(raw_dir: Path, folder: str, name: str, data: bytes | BinaryIO) -> str:
    """Create ``folder/name`` under ``raw_dir`` (``name-2``, ``name-3``, … when taken) and
    return its raw-relative path. Never replaces a file; refuses a folder that resolves
    outside raw/."""
    root = Path(raw_dir).resolve()
    target = (root / folder) if folder else root
    # checked before the folder is made (a symlinked scope folder must not get an api-notes/
    # made where it leads) and again after (one swapped in meanwhile)
    for make in (False, True):
        if make:
            target.mkdir(parents=True, exist_ok=True)
        if not target.resolve().is_relative_to(root):
            raise BadUpload(f"{folder}: resolves outside raw/ (a symlinked folder?); the API "
                            f"writes only inside raw/.")
    stem, suffix = os.path.splitext(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for n in range(1, 10_000):
        candidate = target / (name if n == 1 else f"{stem}-{n}{suffix}")
        try:
            fd = os.open(candidate, flags, 0o644)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                if isinstance(data, bytes):
                    handle.write(data)
                else:
                    shutil.copyfileobj(data, handle, 1 << 20)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            candidate.unlink(missing_ok=True)
            raise
        return candidate.relative_to(root).as_posix()
    raise BadUpload(f"{folder}/{name}: 10,000 files of that name already; rename it.")


__all__ = ["ACCEPTED", "API_FOLDER", "check_text", "note_source", "safe_name", "slug",
           "write_new"]
