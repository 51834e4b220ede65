"""Typed numbers and durations (``metashell/numbers.py``, ``metashell/times.py``).

Both modules are imported by every start, so their patterns are compiled when first used or replaced
by string tests; these tests hold the cheap forms equal to the patterns they replaced, for any text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.numbers import is_int, is_natural, parse_int, parse_seconds
from metashell.times import duration_ms, is_duration_back

#: Digits of several scripts, signs, and what a person types around a number.
_TYPED = st.text(alphabet="0123456789+-.eE smhdw²١٢①\n", max_size=12) | st.text(max_size=8)


@settings(max_examples=3000, deadline=None)
@given(_TYPED)
def test_whole_numbers_are_ascii_digits_with_an_optional_sign(text: str) -> None:
    assert is_natural(text) == (re.fullmatch(r"[0-9]+", text) is not None)
    assert is_int(text) == (re.fullmatch(r"[+-]?[0-9]+", text) is not None)


@settings(max_examples=3000, deadline=None)
@given(_TYPED)
def test_a_duration_back_is_what_the_duration_pattern_takes(text: str) -> None:
    pattern = re.compile(r"-?((?:\d{1,9}(?:ms|s|m|h|d|w))+)")
    assert is_duration_back(text) == (text.startswith("-") and pattern.fullmatch(text) is not None)


def test_typed_numbers() -> None:
    assert parse_int("-12") == -12
    assert parse_int("+7") == 7
    for bad in ("", "+", "١٢", "²", "1.5", " 1"):
        with pytest.raises(ValueError):
            parse_int(bad)
    assert parse_seconds("0.5") == 0.5
    for bad in ("inf", "nan", "1e999", "0", "-1", "١"):
        with pytest.raises(ValueError):
            parse_seconds(bad)
    assert duration_ms("1h30m") == 5_400_000
    assert duration_ms("-500ms") == 500
    assert duration_ms("1x") is None
    assert is_duration_back("-1h") and not is_duration_back("-d") and not is_duration_back("1h")
