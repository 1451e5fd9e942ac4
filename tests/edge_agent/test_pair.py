"""The device's key and certificate across a renewal (edge_agent/pair.py, renewal.due):
whatever step a kill stopped the swap at, what the next start finds becomes a matching
pair, and when a certificate is due. Real keys and certificates, in a temporary folder."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from edge_agent import keys
from edge_agent.files import write_bytes
from edge_agent.pair import Pair, matches
from edge_agent.renewal import due
from tests.edge_agent.certificates import NOW, certificate_for


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    """A working pair, as provisioning leaves it."""
    made = Pair(tmp_path / "device.pem", tmp_path / "device.key")
    write_bytes(made.certificate_file, certificate_for(keys.private_key(made.key_file), 365))
    return made


def nothing(pair: Pair) -> None:
    """Killed before the renewal began."""


def new_key(pair: Pair) -> None:
    """Killed before the answer came: the new key made beside the working one."""
    keys.private_key(pair.next_key)


def new_certificate(pair: Pair) -> None:
    """The renewal's steps up to the answer: a new key beside, its certificate beside."""
    write_bytes(pair.next_certificate, certificate_for(keys.private_key(pair.next_key), 365))


def key_renamed(pair: Pair) -> None:
    """Killed between the two renames."""
    new_certificate(pair)
    pair.next_key.replace(pair.key_file)


Step = Callable[[Pair], None]


@pytest.mark.parametrize(
    ("step", "renewed"),
    [
        (nothing, False),
        (new_key, False),
        (new_certificate, True),
        (key_renamed, True),
    ],
    ids=["nothing begun", "new key only", "answer in hand", "key renamed"],
)
def test_a_kill_at_any_step_leaves_a_pair_that_matches(
    pair: Pair, step: Step, renewed: bool
) -> None:
    old_key = pair.key_file.read_bytes()
    step(pair)
    pair.recover()
    assert matches(pair.certificate_file, pair.key_file)
    assert (pair.key_file.read_bytes() != old_key) is renewed
    assert not pair.next_certificate.exists()


def test_the_new_key_of_an_unanswered_attempt_is_kept_for_the_next(pair: Pair) -> None:
    waiting = keys.private_key(pair.next_key)
    assert pair.recover() is None
    assert keys.private_key(pair.next_key).private_numbers() == waiting.private_numbers()


def test_a_pending_certificate_of_no_key_of_the_device_is_dropped(pair: Pair) -> None:
    stranger = ec.generate_private_key(ec.SECP256R1())
    write_bytes(pair.next_certificate, certificate_for(stranger, 365))
    working = pair.certificate_file.read_bytes()
    assert pair.recover() is not None
    assert not pair.next_certificate.exists() and pair.certificate_file.read_bytes() == working


@pytest.mark.parametrize(
    ("days", "lived", "expected"),
    [
        (365, 200, False),  # 165 days left: more than a third and more than 30 days
        (365, 250, True),  # 115 left: less than a third of 365
        (60, 20, False),  # 40 left: more than a third of 60 and more than 30
        (60, 31, True),  # 29 left: less than 30 days
        (1, 0, True),  # a certificate of a day lives within its last 30 days
    ],
)
def test_a_certificate_is_due_in_its_last_third_or_its_last_30_days(
    days: float, lived: float, expected: bool
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = x509.load_pem_x509_certificate(certificate_for(key, days, lived))
    assert due(certificate, NOW, timedelta(days=30)) is expected
