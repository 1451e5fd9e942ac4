"""A renewal that cannot happen (edge_agent/renewal.py), without a server: it is said on
standard error, the working pair is left as it was, and the next look comes after the
reconnect backoff's wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge_agent import keys
from edge_agent.files import write_bytes
from edge_agent.link import Link
from edge_agent.pair import Pair, matches
from edge_agent.renewal import Renewal
from edge_agent.settings import Settings
from tests.edge_agent.certificates import certificate_for


def renewal(folder: Path, api_key: str = "") -> Renewal:
    pair = Pair(folder / "device.pem", folder / "device.key")
    settings = Settings(
        server="http://127.0.0.1:9",
        mqtt_url="mqtts://127.0.0.1:8883",
        device_id="dev1",
        root_scope="o1/p1",
        api_key=api_key,
        certificate_file=pair.certificate_file,
        key_file=pair.key_file,
        reconnect_min=2.0,
        reconnect_max=4.0,
    )
    link = Link(settings, [], lambda message: None, lambda: None)  # never run: no network
    return Renewal(settings, pair, link)


async def test_a_certificate_that_cannot_be_read_is_said_and_looked_at_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wait = await renewal(tmp_path).check()
    assert 1.0 <= wait <= 2.0  # half to all of reconnect.min_seconds
    err = capsys.readouterr().err
    assert err.startswith("edge agent: certificate renewal: ") and "device.pem" in err


async def test_over_http_a_certificate_alone_cannot_renew(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = renewal(tmp_path)
    key = keys.private_key(made.pair.key_file)
    write_bytes(made.pair.certificate_file, certificate_for(key, 1))  # due
    working = made.pair.certificate_file.read_bytes(), made.pair.key_file.read_bytes()
    first, second = await made.check(), await made.check()
    assert 1.0 <= first <= 2.0 and 2.0 <= second <= 4.0  # doubling, up to the hour
    needed = "over http:// the device's API key is needed to renew"
    assert capsys.readouterr().err.count(needed) == 2
    assert (made.pair.certificate_file.read_bytes(), made.pair.key_file.read_bytes()) == working
    assert matches(made.pair.certificate_file, made.pair.key_file)
