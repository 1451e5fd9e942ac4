"""The enrollment benchmark's own parts (bench/enroll.py): the CSRs it sends are ones the
route takes (an empty subject names no device), each pool outlasts its run, and each row
says the size and the site it was measured on."""

from __future__ import annotations

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from bench import enroll
from edge.certificates import issuing
from edge.kernel.errors import ValidationError

DER, SPKI = Encoding.DER, PublicFormat.SubjectPublicKeyInfo


def test_an_enrollment_request_names_no_device_and_meets_the_rules() -> None:
    sent = enroll.request_for()
    assert x509.load_pem_x509_csr(sent.encode()).subject == x509.Name([])
    issuing.checked(sent, lambda name: True)  # any common name would be refused


def test_a_renewal_request_names_its_device() -> None:
    sent = enroll.request_for("dev1")
    with pytest.raises(ValidationError):
        issuing.checked(sent, lambda name: name == "dev1")
    issuing.checked(sent, lambda name: False)


def test_each_request_has_its_own_key() -> None:
    keys = [x509.load_pem_x509_csr(r.encode()).public_key() for r in enroll.made(3)]
    assert len({k.public_bytes(DER, SPKI) for k in keys}) == 3


@pytest.mark.parametrize("seconds", [0.01, 3.0, 10.0])
def test_a_pool_outlasts_its_run_at_the_ceiling(seconds: float) -> None:
    assert enroll.pool_size(seconds) >= max(100, seconds * enroll.CEILING)


def test_an_enrollment_row_names_its_size_and_site() -> None:
    label = enroll.enroll_label(8, 2_030)
    assert "8 concurrent" in label and "site of 2,030 devices" in label
    assert "POST /v2/provisioning/enroll" in label
