"""Errors of the documents and links API (the REST layer maps each to its status).

    MindgraphError
    ├── Forbidden (errors.py)
    │   └── Refused      the caller may not do this to that document (403, with the reason)
    ├── Busy             a rescan of this tenant is already running (409)
    ├── BadUpload        a file's type or name cannot be taken (415 / 422, naming the file)
    └── TooLarge (errors.py)
        └── UploadTooLarge   a file over the per-file or compile cap, or too many files (413)
"""

from __future__ import annotations

from ..errors import Forbidden, MindgraphError, TooLarge


class Refused(Forbidden):
    """The caller may not do this; the message says why and what it may do instead."""


class Busy(MindgraphError):
    """One of these is already running for this tenant; retry when it has finished."""


class BadUpload(MindgraphError):
    """An uploaded file of a type we do not take, or whose content is not text."""


class UploadTooLarge(TooLarge):
    """An uploaded file over the per-file limit, or more files than one upload takes."""


__all__ = ["BadUpload", "Busy", "Refused", "UploadTooLarge"]
