"""cache.fastbytes.view gives bytes.find and bytes.count's answers (the SIMD search is a speed-up only)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.cache import fastbytes

NEEDLES = [b" \n", b"\t\n", b"\n\n\n", b"data:", b"```", b"~~~", b"# ", b"#\t", b"\n", b"\xc2\xa0\n", b"aa"]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300) | st.text(alphabet=" \n\t#`~ad:a\xa0", max_size=300).map(str.encode),
       st.sampled_from(NEEDLES), st.integers(0, 320), st.integers(0, 320))
def test_find_and_count_are_the_bytes_answers(data, needle, start, end):
    v = fastbytes.view(data)
    assert v.find(needle) == data.find(needle)
    assert v.find(needle, start) == data.find(needle, start)
    assert v.find(needle, start, end) == data.find(needle, start, end)
    assert v.count(needle) == data.count(needle)
    assert v.count(needle, start, end) == data.count(needle, start, end)


def test_the_simd_search_is_in_use():
    assert fastbytes.SIMD, "stringzilla is a dependency: without it the post-fetch scans are 5–15× slower"
