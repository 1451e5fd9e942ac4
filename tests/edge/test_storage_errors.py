"""Storage's refusals cross into edge as edge's errors (edge/storage_errors.py)."""

from __future__ import annotations

import pytest

from edge import errors, storage_errors
from storage import space


@pytest.mark.parametrize(
    ("raised", "seen"),
    [(space.DiskFull, errors.DiskFull), (space.NotWritable, errors.NotWritable)],
)
def test_a_refusal_is_mapped_with_its_cause(raised: type[Exception], seen: type[Exception]) -> None:
    with pytest.raises(seen) as caught, storage_errors.mapped():
        raise raised("No space left on device")
    assert isinstance(caught.value.__cause__, raised)
    assert str(caught.value) == "No space left on device"
    assert not isinstance(caught.value, errors.EdgeError)  # its text never reaches a caller


def test_other_errors_pass_unchanged() -> None:
    with pytest.raises(OSError), storage_errors.mapped():
        raise OSError("not a refusal")
