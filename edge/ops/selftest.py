"""`edge selftest`: start each part of the runtime stack once and report.

Run inside the single-file executable, it proves the build carries everything that is
loaded late or natively: SQLite with FTS5 and JSON1 (apsw), cryptography, Argon2,
Pillow's decoders, PyOTP, the regex engine, JWT signing, and the amqtt broker with the
plugins it finds through package metadata.
"""

from __future__ import annotations

import asyncio
import io
import socket
import time
from collections.abc import Callable

Check = tuple[str, Callable[[], str]]


def _sqlite() -> str:
    from storage.probe import sqlite_features

    return sqlite_features()


def _crypto() -> str:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    token = jwt.encode({"sub": "x"}, key, algorithm="ES256")
    assert jwt.decode(token, key.public_key(), algorithms=["ES256"])["sub"] == "x"
    return "cryptography + PyJWT (ES256)"


def _argon2() -> str:
    from edge.auth import hashing

    stored = hashing.hash_sync("selftest-password")
    assert hashing.verify_sync(stored, "selftest-password")
    return "Argon2id"


def _pillow() -> str:
    from PIL import Image

    for fmt in ("PNG", "JPEG"):
        buffer = io.BytesIO()
        Image.new("RGB", (32, 24), (10, 20, 30)).save(buffer, fmt)
        decoded = Image.open(io.BytesIO(buffer.getvalue()))
        decoded.load()
        assert decoded.size == (32, 24)
    return "Pillow (PNG, JPEG)"


def _otp() -> str:
    import pyotp

    totp = pyotp.TOTP(pyotp.random_base32())
    assert totp.verify(totp.now())
    return "PyOTP (TOTP)"


def _regex() -> str:
    import regex

    assert regex.search(r"\p{L}+", "édge", timeout=0.1) is not None
    return "regex (time-limited)"


def _broker() -> str:
    return asyncio.run(_broker_round_trip())


async def _broker_round_trip() -> str:
    from amqtt.broker import Broker
    from amqtt.client import MQTTClient

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    broker = Broker({"listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}}})
    await broker.start()
    client = MQTTClient()
    try:
        await client.connect(f"mqtt://127.0.0.1:{port}/")
        await client.subscribe([("selftest/#", 1)])
        await client.publish("selftest/ping", b"pong", qos=1)
        message = await client.deliver_message(timeout_duration=5)
        assert message is not None and message.publish_packet.payload.data == b"pong"
        await client.disconnect()
    finally:
        await broker.shutdown()
    return "amqtt broker + client (MQTT round trip)"


CHECKS: list[Check] = [
    ("sqlite", _sqlite),
    ("crypto", _crypto),
    ("argon2", _argon2),
    ("pillow", _pillow),
    ("otp", _otp),
    ("regex", _regex),
    ("broker", _broker),
]


def run(echo: Callable[[str], None] = print) -> bool:
    """Run every check; print one line each and a summary; True when all passed."""
    failed = 0
    for name, check in CHECKS:
        began = time.perf_counter()
        try:
            detail = check()
            echo(f"ok    {name:8} {detail} ({(time.perf_counter() - began) * 1000:.0f} ms)")
        except Exception as exc:  # report every failure, keep going
            failed += 1
            echo(f"FAIL  {name:8} {type(exc).__name__}: {exc}")
    echo(f"{len(CHECKS) - failed} passed, {failed} failed")
    return failed == 0
