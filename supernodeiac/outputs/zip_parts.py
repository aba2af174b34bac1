"""A zip package written from deflated parts: the bytes of ``zipfile``'s ``writestr`` (one
ZIP_DEFLATED entry per part, all dated ``date_time``, mode 0600, no extra fields) into a seekable
buffer, with each part deflated apart from the package (:func:`deflated`).

Why not ``zipfile``: a part deflated once can be written into a second package unchanged.
``snc diff`` compares a row of racks' workbook on both sides, and the pull-list sheets of racks
whose cables are the same on both sides are the same XML: the second side takes the first side's
deflated sheet instead of making and deflating it again (``outputs.workbook``). The bytes are
those of ``zipfile`` (``tests/test_zip_parts.py`` holds them to it).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from typing import NamedTuple

_LOCAL = struct.Struct("<4s2B4HL2L2H")  # zipfile's structFileHeader
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # structCentralDir
_END = struct.Struct("<4s4H2LH")  # structEndArchive
_MODE = 0o600 << 16  # ?rw------- (zipfile's default for a part written from data)


class Part(NamedTuple):
    """A part's data deflated (raw deflate, no zlib header), its CRC-32 and length."""

    crc: int
    size: int
    deflated: bytes


def deflated(data: bytes, level: int) -> Part:
    """``data`` deflated as ``zipfile`` deflates a part at ``level`` (one compress call, then flush)."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return Part(zlib.crc32(data), len(data), c.compress(data) + c.flush())


class ZipParts:
    """Parts added in order, the central directory at :meth:`close`. Past zip's 32-bit limits
    (2 GiB, 65,535 parts) it raises rather than write zip64 records: a workbook is far below."""

    def __init__(self, date_time: tuple[int, int, int, int, int, int]) -> None:
        info = zipfile.ZipInfo("x", date_time)  # the versions and system zipfile writes
        self._versions = (info.create_version, info.create_system, info.extract_version)
        dt = date_time
        self._date = (dt[0] - 1980) << 9 | dt[1] << 5 | dt[2]
        self._time = dt[3] << 11 | dt[4] << 5 | (dt[5] // 2)
        self._chunks: list[bytes] = []
        self._offset = 0
        self._entries: list[tuple[bytes, int, Part, int]] = []  # (name, flag bits, part, header offset)

    def add(self, name: str, part: Part) -> None:
        try:
            raw, flags = name.encode("ascii"), 0
        except UnicodeEncodeError:
            raw, flags = name.encode("utf-8"), 0x800  # zipfile's UTF-8 name flag
        if max(part.size * 1.05, len(part.deflated), self._offset) > zipfile.ZIP64_LIMIT:
            raise ValueError(f"{name}: too large for a zip without zip64 records")
        _, _, extract = self._versions
        header = _LOCAL.pack(
            b"PK\003\004", extract, 0, flags, zipfile.ZIP_DEFLATED, self._time, self._date,
            part.crc, len(part.deflated), part.size, len(raw), 0,
        )  # fmt: skip
        self._entries.append((raw, flags, part, self._offset))
        self._chunks += (header, raw, part.deflated)
        self._offset += len(header) + len(raw) + len(part.deflated)

    def close(self) -> bytes:
        if len(self._entries) > zipfile.ZIP_FILECOUNT_LIMIT:
            raise ValueError(f"{len(self._entries):,} parts: too many for a zip without zip64 records")
        create, system, extract = self._versions
        start = self._offset
        for raw, flags, part, offset in self._entries:
            entry = _CENTRAL.pack(
                b"PK\001\002", create, system, extract, 0, flags, zipfile.ZIP_DEFLATED, self._time, self._date,
                part.crc, len(part.deflated), part.size, len(raw), 0, 0, 0, 0, _MODE, offset,
            )  # fmt: skip
            self._chunks += (entry, raw)
            self._offset += _CENTRAL.size + len(raw)
        if self._offset > zipfile.ZIP64_LIMIT:
            raise ValueError("the central directory is too large for a zip without zip64 records")
        count = len(self._entries)
        self._chunks.append(_END.pack(b"PK\005\006", 0, 0, count, count, self._offset - start, start, 0))
        return b"".join(self._chunks)
