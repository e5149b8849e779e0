"""The word diff shown for a modification: hand-made cases, and that no text is lost."""

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gating.diffs import word_diff


@pytest.mark.parametrize(
    ("original", "edited", "expected"),
    [
        ("", "", []),
        ("Same text.", "Same text.", [("equal", "Same text.")]),
        ("", "New.", [("insert", "New.")]),
        ("Old.", "", [("delete", "Old.")]),
        (
            "Revenue grew 4% on the quarter.",
            "Revenue grew 5% on the quarter.",
            [("equal", "Revenue grew "), ("delete", "4%"), ("insert", "5%"),
             ("equal", " on the quarter.")],
        ),
        (
            "one two three",
            "one three",
            [("equal", "one "), ("delete", "two "), ("equal", "three")],
        ),
        (
            "one three",
            "one two three",
            [("equal", "one "), ("insert", "two "), ("equal", "three")],
        ),
        ("grew 4%", "grew 4% today", [("equal", "grew 4%"), ("insert", " today")]),
        # A space shared only between two changes joins them into one change.
        ("the cat sat", "the dog ran", [("equal", "the "), ("delete", "cat sat"),
                                        ("insert", "dog ran")]),
        ("the cat sat", "a dog ran", [("delete", "the cat sat"), ("insert", "a dog ran")]),
        # Whitespace is text too: a changed line break or double space shows.
        ("a  b\nc", "a b\nc", [("equal", "a"), ("delete", "  "), ("insert", " "),
                               ("equal", "b\nc")]),
        ("line one\nline two", "line one\n\nline two",
         [("equal", "line one"), ("delete", "\n"), ("insert", "\n\n"), ("equal", "line two")]),
    ],
)  # fmt: skip
def test_word_diff(original, edited, expected):
    assert word_diff(original, edited) == expected


def test_markup_is_just_words():
    assert word_diff("<b>ok</b>", "<script>x</script>") == [
        ("delete", "<b>ok</b>"),
        ("insert", "<script>x</script>"),
    ]


@given(st.text(), st.text())
def test_the_segments_rebuild_both_texts(original, edited):
    segments = word_diff(original, edited)

    assert "".join(text for op, text in segments if op != "insert") == original
    assert "".join(text for op, text in segments if op != "delete") == edited
    assert all(text for _, text in segments)
    # Neighbours never repeat an operation: each run is one segment.
    assert all(a[0] != b[0] for a, b in pairwise(segments))
