"""edge/certificates/issuing.py: each rule a signing request must meet (enrollment and
renewal alike), one request breaking it, and the message naming the rule; and
`SiteCa.sign_client`, which signs the key of a request that met them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from edge.certificates import issuing
from edge.certificates.ca import SiteCa
from edge.kernel.errors import ValidationError
from tests import csrs


def no_device(_: str) -> bool:
    return False


def refusal(sent: issuing.Sent, names_another: issuing.NamesAnother = no_device) -> str:
    with pytest.raises(ValidationError) as refused:
        issuing.checked(sent, names_another)
    assert refused.value.field == "csr"
    return refused.value.message


@pytest.mark.parametrize(
    ("key", "allowed"),
    [
        pytest.param(csrs.ec_key(), True, id="ec-p256"),
        pytest.param(csrs.ec_key(ec.SECP384R1()), True, id="ec-p384"),
        pytest.param(csrs.rsa_key(2048), True, id="rsa-2048"),
        pytest.param(csrs.ec_key(ec.SECP521R1()), False, id="ec-p521"),
        pytest.param(csrs.ec_key(ec.SECP256K1()), False, id="ec-secp256k1"),
        pytest.param(csrs.rsa_key(1024), False, id="rsa-1024"),
        pytest.param(csrs.ed25519_key(), False, id="ed25519"),
        pytest.param(csrs.dsa_key(), False, id="dsa-2048"),
    ],
)
def test_key_types_and_sizes(key: csrs.CertificateIssuerPrivateKeyTypes, allowed: bool) -> None:
    pem = csrs.csr_pem(key)
    if allowed:
        assert issuing.checked(pem, no_device) == key.public_key()
    else:
        assert "its key is" in refusal(pem) and issuing.ALLOWED in refusal(pem)


def test_a_bad_signature_is_refused() -> None:
    pem = csrs.tampered(csrs.csr_pem(csrs.ec_key(), "tamper-me-a"), "tamper-me-a", "tamper-me-b")
    assert "bad signature" in refusal(pem)


def test_a_subject_naming_another_device_is_refused() -> None:
    pem = csrs.csr_pem(csrs.ec_key(), "Pump 7")
    assert "names another device" in refusal(pem, lambda name: name == "Pump 7")
    assert issuing.checked(pem, no_device) is not None


@pytest.mark.parametrize(
    ("tag", "raw"),
    [(0x0C, b"\xff" * 11), (0x16, b"\xff" * 11), (0x02, b"\x01" * 11)],
    ids=["utf8-invalid", "ia5-high-byte", "integer"],
)
def test_a_subject_that_cannot_be_decoded_is_refused(tag: int, raw: bytes) -> None:
    """`cryptography` reads a subject's strings lazily: a ValueError there is the 400 of
    the subject rule, not an error of the server."""
    pem = csrs.undecodable_subject(csrs.ec_key(), tag, raw)
    assert "its subject cannot be decoded" in refusal(pem)


def test_an_rsa_key_must_use_the_exponent_65537() -> None:
    assert "its RSA public exponent is 3; allowed: 65537" in refusal(
        csrs.csr_pem(csrs.rsa_key(2048, exponent=3))
    )


@pytest.mark.parametrize(
    "pem",
    [
        "",
        "hello",
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
        "-----BEGIN CERTIFICATE REQUEST-----\n" + "A" * 20_000,
    ],
    ids=["empty", "not-pem", "garbage", "too-long"],
)
def test_what_is_no_request_is_refused(pem: str) -> None:
    assert refusal(pem)


def test_the_size_limit_counts_padding() -> None:
    """A good request padded past MAX_PEM with blanks is refused as sent, not as stripped."""
    pem = csrs.csr_pem(csrs.ec_key())
    assert "must be at most 16384 characters" in refusal(pem + " " * issuing.MAX_BYTES)


def test_an_openssl_request_passes(tmp_path: Path) -> None:
    pem, _ = csrs.openssl_csr(tmp_path, "ec", "-pkeyopt", "ec_paramgen_curve:P-384")
    assert isinstance(issuing.checked(pem, no_device), ec.EllipticCurvePublicKey)


def test_the_site_ca_certifies_the_requests_key_for_the_device(tmp_path: Path) -> None:
    """For `device_certificate_days` (here 30), whatever the CA's own lifetime."""
    key = csrs.rsa_key(2048)
    ca = SiteCa.open(tmp_path, client_days=30)
    issued = ca.sign_client(issuing.checked(csrs.csr_pem(key), no_device), "dev0000000000001", "o")
    cert = x509.load_pem_x509_certificate(issued.certificate.encode())
    cert.verify_directly_issued_by(ca.cert)
    assert ca.issued(cert.public_bytes(csrs.serialization.Encoding.DER)) is not None
    assert cert.public_key() == key.public_key()
    cn = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert cn == "dev0000000000001" and issued.serial == format(cert.serial_number, "x")
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).days == 30


def test_der_as_est_sends_it_meets_the_same_rules() -> None:
    """EST's bytes: DER, or PEM from a lenient tool; each rule as for PEM text."""
    good = csrs.csr_pem(csrs.ec_key())
    der = x509.load_pem_x509_csr(good.encode()).public_bytes(csrs.serialization.Encoding.DER)
    assert issuing.checked(der, no_device) == issuing.checked(good.encode(), no_device)
    exponent_3 = csrs.csr_pem(csrs.rsa_key(2048, exponent=3)).encode()
    assert "its RSA public exponent is 3" in refusal(exponent_3)
    assert "is not a readable" in refusal(b"\x30\x03\x02\x01\x00")
    assert "must be at most 16384 bytes" in refusal(der + b"\0" * issuing.MAX_BYTES)


def test_every_common_name_is_asked_about() -> None:
    """A second CN naming another device is refused though the first is the device's own
    (renewal asks `name != its ID`)."""
    key = csrs.ec_key()
    names = [x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, cn) for cn in ("mine", "theirs")]
    request = x509.CertificateSigningRequestBuilder(x509.Name(names)).sign(
        key, csrs.hashes.SHA256()
    )
    pem = request.public_bytes(csrs.serialization.Encoding.PEM).decode()
    assert "names another device" in refusal(pem, lambda name: name != "mine")
