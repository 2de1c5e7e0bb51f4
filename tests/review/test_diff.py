"""The word diff of long answers, on hand-computed cases."""

from __future__ import annotations

import pytest

from snapaudit.review.diff import is_long, word_diff


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("the cat sat on the mat", "the dog sat on a mat",
     [("=", "the"), ("-", "cat"), ("+", "dog"), ("=", "sat on"), ("-", "the"), ("+", "a"),
      ("=", "mat")]),
    ("a b c", "a b c", [("=", "a b c")]),
    ("", "x y", [("+", "x y")]),
    ("x y", "", [("-", "x y")]),
    # LCS of "a b c d" and "b a d c" has length 2; at a vs b both ways keep 2: delete a;
    # b = b; at c vs a both keep 1: delete c; d vs a: only inserting a keeps the d; d = d;
    # c is left over: -a =b -c +a =d +c
    ("a b c d", "b a d c", [("-", "a"), ("=", "b"), ("-", "c"), ("+", "a"), ("=", "d"),
                            ("+", "c")]),
    ("one  two\nthree", "one two three four", [("=", "one two three"), ("+", "four")]),
    ("p q r s", "p x r s", [("=", "p"), ("-", "q"), ("+", "x"), ("=", "r s")]),
])
def test_word_diff(old: str, new: str, expected: list[tuple[str, str]]) -> None:
    assert word_diff(old, new) == expected


def test_a_middle_too_large_for_the_table_is_one_deletion_and_one_insertion() -> None:
    assert word_diff("k a b z", "k c d z", max_cells=3) == [("=", "k"), ("-", "a b"), ("+", "c d"),
                                               ("=", "z")]


def test_long_means_over_200_characters_in_either_answer() -> None:
    assert not is_long("x" * 200, "y" * 200)
    assert is_long("x" * 201, "y") and is_long("y", "x" * 201)
