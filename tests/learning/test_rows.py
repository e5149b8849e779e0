import numpy as np
import pytest

from learning.statistics.rows import unique_rows


@pytest.mark.parametrize("columns", [1, 3, 4, 5])
def test_integer_rows_as_np_unique_gives_them(columns):
    # The label model's patterns: band, gold and up to three verdicts, -1 for none.
    rows = np.random.default_rng(5).integers(-1, 4, size=(200, columns))
    distinct, inverse = unique_rows(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))


def test_boolean_rows_as_np_unique_gives_them():
    # The validators' failure patterns: False sorts before True, column by column.
    rows = np.random.default_rng(6).random((500, 9)) < 0.2
    distinct, inverse = unique_rows(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert distinct.dtype == bool
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))


def test_by_hand():
    rows = np.array([[1, 0], [0, 2], [1, 0], [0, 1]])
    distinct, inverse = unique_rows(rows)
    np.testing.assert_array_equal(distinct, [[0, 1], [0, 2], [1, 0]])
    np.testing.assert_array_equal(inverse, [2, 1, 2, 0])
