"""Token signing keys: an EC P-256 key pair in `<data>/keys/`, published as a JWKS.

The private key never leaves the data folder; its file is readable by the owner only.
Several keys may be present (rotation); the newest signs, all of them verify.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from storage import layout

SIGNING_PREFIX = layout.SIGNING_KEY_PREFIX
HMAC_FILE = layout.HMAC_KEY_FILE
MFA_FILE = layout.MFA_KEY_FILE


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: ec.EllipticCurvePrivateKey

    @property
    def public(self) -> ec.EllipticCurvePublicKey:
        return self.private.public_key()

    def jwk(self) -> dict[str, Any]:
        numbers = self.public.public_numbers()
        return {
            "kty": "EC",
            "crv": "P-256",
            "alg": "ES256",
            "use": "sig",
            "kid": self.kid,
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }


@dataclass(frozen=True)
class KeyRing:
    signing: list[SigningKey]
    hmac_secret: bytes
    mfa_secret: bytes = b""

    @property
    def current(self) -> SigningKey:
        return self.signing[-1]

    def by_kid(self, kid: str) -> SigningKey | None:
        return next((k for k in self.signing if k.kid == kid), None)

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.jwk() for k in self.signing]}


def load_or_create(data_dir: Path) -> KeyRing:
    folder = layout.keys_dir(data_dir)
    folder.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
    if not list(folder.glob(f"{SIGNING_PREFIX}*.pem")):
        _create_signing_key(folder)
    hmac_path = folder / HMAC_FILE
    if not hmac_path.exists():
        layout.write_secret(hmac_path, secrets.token_bytes(32))
    mfa_path = folder / MFA_FILE
    if not mfa_path.exists():
        layout.write_secret(mfa_path, Fernet.generate_key())
    return KeyRing(_load_signing(folder), hmac_path.read_bytes(), mfa_path.read_bytes())


def _create_signing_key(folder: Path) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    kid = _kid(private.public_key())
    count = len(list(folder.glob(f"{SIGNING_PREFIX}*.pem")))
    layout.write_secret(folder / f"{SIGNING_PREFIX}{count + 1:04d}-{kid}.pem", pem)


def _load_signing(folder: Path) -> list[SigningKey]:
    keys = []
    for path in sorted(folder.glob(f"{SIGNING_PREFIX}*.pem")):
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
        assert isinstance(private, ec.EllipticCurvePrivateKey)
        keys.append(SigningKey(_kid(private.public_key()), private))
    return keys


def _kid(public: ec.EllipticCurvePublicKey) -> str:
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _b64(hashlib.sha256(der).digest()[:12])


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
