"""Reject reasons as people read them."""

import pytest

from gating.reviews import reason_label


@pytest.mark.parametrize(
    ("code", "label"),
    [
        ("factual_error", "Factual error"),
        ("off_task", "Off task"),
        ("unsafe", "Unsafe"),
        ("", ""),
    ],
)
def test_a_reason_code_in_words(code, label):
    assert reason_label(code) == label
