"""What a bearer token is, decided in one place.

Four kinds of secret arrive as `Authorization: Bearer <token>`, because that is how the
public SDK sends each of them:
- an access token: an ES256 JWT (three base64url parts joined by dots);
- the session of a sign-in challenge (on the challenge answer and the MFA setup calls);
- a password reset token (on PUT /v2/auth/password, mailed to the user);
- a device API key (the SDK sends it wherever a token goes; also `X-API-Key`).

An access token is a JWT and an API key starts with `edk_`, so both are told by shape.
The two other opaque kinds look alike (random URL-safe text); what tells them apart is
where they are sent. Each guard names the kinds it accepts (one of the sets below), and
`kind_of` decides: a JWT is an access token, an `edk_` key an API key (refused where keys
are not taken), anything else the one other opaque kind that guard takes.

A header whose bytes are not printable ASCII cannot hold any of these; aiohttp hands such
bytes over as surrogates, which would fail later when the token is encoded, so they are
refused here as a 401.
"""

from __future__ import annotations

import re
from enum import Enum

from edge.kernel.errors import Unauthenticated


class Kind(Enum):
    ACCESS_TOKEN = "access token"
    CHALLENGE_SESSION = "challenge session"
    RESET_TOKEN = "reset token"
    API_KEY = "API key"


OPAQUE = frozenset({Kind.CHALLENGE_SESSION, Kind.RESET_TOKEN, Kind.API_KEY})
# What each guard accepts.
SIGNED_IN = frozenset({Kind.ACCESS_TOKEN, Kind.API_KEY})
SIGN_IN_STEP = frozenset({Kind.CHALLENGE_SESSION})
MFA_SETUP = frozenset({Kind.ACCESS_TOKEN, Kind.CHALLENGE_SESSION})
PASSWORD_CHANGE = frozenset({Kind.ACCESS_TOKEN, Kind.RESET_TOKEN})

REQUIRED = "Authentication required: send 'Authorization: Bearer <token>'"
MALFORMED = "Malformed Authorization header"
_JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


def from_header(value: str | None) -> str | None:
    """The token of a Bearer Authorization header; None when there is none (or no token).

    Unauthenticated when the header carries anything but printable ASCII.
    """
    if not value:
        return None
    if not value.isascii() or not value.isprintable():
        raise Unauthenticated(MALFORMED)
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    if " " in token:  # printable ASCII (checked above) but for the space: \x21-\x7e only
        raise Unauthenticated(MALFORMED)
    return token


API_KEY_PREFIX = "edk_"


def is_api_key(token: str) -> bool:
    return token.startswith(API_KEY_PREFIX)


def kind_of(token: str, accepts: frozenset[Kind]) -> Kind:
    """The kind of this bearer where `accepts` are the kinds taken.

    Where access tokens are taken, a JWT is one; anything else is the opaque kind taken
    there. Where only one kind is taken, the token is of that kind (or it is invalid, which
    the lookup of that kind finds out).
    """
    if is_api_key(token):
        if Kind.API_KEY not in accepts:
            raise Unauthenticated("A device API key is not accepted here")
        return Kind.API_KEY
    if Kind.ACCESS_TOKEN in accepts and (_JWT.match(token) or len(accepts) == 1):
        return Kind.ACCESS_TOKEN
    opaque = accepts & OPAQUE - {Kind.API_KEY}
    if not opaque and Kind.ACCESS_TOKEN in accepts:
        return Kind.ACCESS_TOKEN  # not a JWT: its verification refuses it
    if len(opaque) != 1:
        raise ValueError(
            f"a guard must take at most one opaque kind: {sorted(k.value for k in opaque)}"
        )
    return next(iter(opaque))
