"""edge/provisioning/csr.py: each rule a signing request must meet, one request breaking it,
and the message naming the rule; and edge/certificates/signing.py, which signs the key of
a request that met them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from edge.certificates.ca import SiteCa
from edge.certificates.signing import CsrSigner
from edge.kernel.errors import ValidationError
from edge.provisioning import csr
from tests import csrs


def no_device(_: str) -> bool:
    return False


def refusal(pem: str, names_device: csr.NamesDevice = no_device) -> str:
    with pytest.raises(ValidationError) as refused:
        csr.checked(pem, names_device)
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
        assert csr.checked(pem, no_device).public_key == key.public_key()
    else:
        assert "its key is" in refusal(pem) and csr.ALLOWED in refusal(pem)


def test_a_bad_signature_is_refused() -> None:
    pem = csrs.tampered(csrs.csr_pem(csrs.ec_key(), "tamper-me-a"), "tamper-me-a", "tamper-me-b")
    assert "bad signature" in refusal(pem)


def test_a_subject_naming_another_device_is_refused() -> None:
    pem = csrs.csr_pem(csrs.ec_key(), "Pump 7")
    assert "names another device" in refusal(pem, lambda name: name == "Pump 7")
    assert csr.checked(pem, no_device).public_key is not None


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
    assert "must be at most 16384 characters" in refusal(pem + " " * csr.MAX_PEM)


def test_an_openssl_request_passes(tmp_path: Path) -> None:
    pem, _ = csrs.openssl_csr(tmp_path, "ec", "-pkeyopt", "ec_paramgen_curve:P-384")
    assert isinstance(csr.checked(pem, no_device).public_key, ec.EllipticCurvePublicKey)


def test_the_signer_certifies_the_requests_key_for_the_device(tmp_path: Path) -> None:
    key = csrs.rsa_key(2048)
    request = csr.checked(csrs.csr_pem(key), no_device)
    signed = CsrSigner.open(tmp_path).sign(request.public_key, "dev0000000000001", "org1")
    cert = x509.load_pem_x509_certificate(signed.certificate.encode())
    ca = SiteCa.open(tmp_path)
    cert.verify_directly_issued_by(ca.cert)
    assert ca.issued(cert.public_bytes(csrs.serialization.Encoding.DER)) is not None
    assert cert.public_key() == key.public_key()
    assert signed.public_key.encode() == csrs.public_pem(key)
    cn = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert cn == "dev0000000000001" and signed.serial == format(cert.serial_number, "x")
