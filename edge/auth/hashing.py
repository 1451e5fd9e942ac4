"""Password hashing and policy: Argon2id (off the event loop), kept apart from the flows
that change a password (edge/auth/passwords.py) so that anything may hash or check one
without importing the tenancy services those flows need.

Hashing runs on a pool of its own, at a lower CPU priority. One Argon2id check takes four
threads and 64 MiB for tens of milliseconds; at the event loop's priority those threads
took the cores from it, and every other request waited (the soak, bench/soak.py, measured
an HTTP p99 many times higher with a sign-in a second). At nice 10 they use what the loop
leaves, and at most POOL_SIZE passwords are hashed at once, which bounds their memory.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from edge.auth import common_passwords
from edge.kernel.errors import ValidationError

_hasher = PasswordHasher()
MIN_LENGTH = 8
MAX_LENGTH = 256
COMMON = (
    "is one of the most common passwords, which attackers try first on every account;"
    " choose another"
)
# A hash to verify against when the account does not exist, so timing does not tell.
_DUMMY = _hasher.hash("edge-timing-equalizer")


def use(hasher: PasswordHasher) -> None:
    """Hash with `hasher` from now on (the test suite, at Argon2id's smallest cost): the
    dummy hash that equalizes the timing of unknown accounts comes from it too."""
    global _hasher, _DUMMY
    _hasher = hasher
    _DUMMY = hasher.hash("edge-timing-equalizer")


POOL_SIZE = 2
NICENESS = 10  # added to the nice value the pool's threads start with


def _lower_priority() -> None:
    """Run this pool thread, and the threads Argon2 starts from it, below the event loop.
    Linux sets a priority per thread; elsewhere the call would reach the whole process."""
    if sys.platform == "linux":
        try:
            me = threading.get_native_id()
            os.setpriority(
                os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + NICENESS)
            )
        except OSError:
            pass  # a priority we may not set is not worth failing a sign-in over


_pool = ThreadPoolExecutor(POOL_SIZE, "edge-password", initializer=_lower_priority)


def check_policy(
    password: str,
    *,
    username: str | None = None,
    email: str | None = None,
    field: str = "password",
) -> None:
    if len(password) < MIN_LENGTH:
        raise ValidationError(field, f"must be at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise ValidationError(field, f"must be at most {MAX_LENGTH} characters")
    if username and password.casefold() == username.casefold():
        raise ValidationError(field, "must not be the username")
    if email and password.casefold() == email.casefold():
        raise ValidationError(field, "must not be the e-mail address")
    if common_passwords.is_common(password):
        raise ValidationError(field, COMMON)


def hash_sync(password: str) -> str:
    return _hasher.hash(password)


async def hash(password: str) -> str:
    return await asyncio.get_running_loop().run_in_executor(_pool, _hasher.hash, password)


def verify_sync(stored: str | None, password: str) -> bool:
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


async def verify(stored: str | None, password: str) -> bool:
    return await asyncio.get_running_loop().run_in_executor(_pool, verify_sync, stored, password)
