"""outputs/zip_parts: a package written from deflated parts is the bytes zipfile's writestr writes
(the workbooks' parts: ZIP_DEFLATED at one level, one date, mode 0600), and reads back."""

from __future__ import annotations

import io
import zipfile

from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.outputs.zip_parts import ZipParts, deflated

DATE = (1980, 1, 1, 0, 0, 0)
names = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
datas = st.one_of(st.binary(max_size=3000), st.text(max_size=2000).map(lambda t: (t * 7).encode("utf-8")))


def _zipfile(parts: list[tuple[str, bytes]], level: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        for name, data in parts:
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            z.writestr(info, data, compresslevel=level)
    return buffer.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(names, datas), max_size=6, unique_by=lambda x: x[0]), st.sampled_from([1, 6, 9]))
def test_the_bytes_of_zipfile(parts, level):
    z = ZipParts(DATE)
    for name, data in parts:
        z.add(name, deflated(data, level))
    data = z.close()
    assert data == _zipfile(parts, level)
    with zipfile.ZipFile(io.BytesIO(data)) as back:
        assert back.testzip() is None
        assert [(i.filename, back.read(i)) for i in back.infolist()] == parts


def test_a_part_deflated_once_goes_into_two_packages():
    sheet = deflated(b"<row/>" * 1000, 1)
    first, second = ZipParts(DATE), ZipParts(DATE)
    first.add("a.xml", deflated(b"a", 1))
    first.add("sheet2.xml", sheet)
    second.add("sheet1.xml", sheet)
    assert first.close() == _zipfile([("a.xml", b"a"), ("sheet2.xml", b"<row/>" * 1000)], 1)
    assert second.close() == _zipfile([("sheet1.xml", b"<row/>" * 1000)], 1)
