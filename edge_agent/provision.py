"""`edge agent provision`: the device enrolls itself with a provisioning claim
(docs/provisioning.md, docs/agent.md) and keeps what it needs to run as that device.

The claim comes from the flags (`--claim-id`, `--secret`, `--server`), a QR code's text
(`--qr FILE`, `{"enroll", "claim_id", "secret"}`) or the configuration file's
`[provisioning]` table, in that order of precedence. The agent makes its own EC P-256 key
(`device.key`, 0600, in the state folder), sends a CSR for it with the claim to
`POST /v2/provisioning/enroll`, and keeps the answer there: `api_key` (0600), the
certificate (`device.pem`), the site CA (`ca.pem`, from the server it enrolled with) and
`identity.json` last (the server, the device's ID, root scope, broker URL, and those
files), which `edge agent` reads where its configuration names no device
(settings.with_identity). A configuration file that does not exist is written, naming the
server and the state folder.

Run again once provisioned (`identity.json` is there) it says so and changes nothing: a
claim is spent once per run that succeeds, never twice for one device.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from edge_agent import keys
from edge_agent.files import state_folder, write_bytes, write_json
from edge_agent.server_api import tls
from edge_agent.settings import IDENTITY, SettingsError

ENROLL = "/v2/provisioning/enroll"
ROOT_CA = "/v2/devices/root-ca.pem"
DEFAULT_STATE = Path("/var/lib/edge-agent")
FILES = {
    "api_key_file": "api_key",
    "certificate_file": "device.pem",
    "key_file": "device.key",
    "ca_file": "ca.pem",
}
Json = dict[str, Any]


class Refused(Exception):
    """The server refused the enrollment, or could not be reached: the message says why."""


@dataclass(frozen=True)
class Claim:
    server: str
    claim_id: str
    secret: str = field(repr=False)
    name: str | None = None


@dataclass(frozen=True)
class Plan:
    """What one run does: enroll with `claim` into `state_dir`, reaching the broker at
    `mqtt` (None: mqtts:// on the broker the server names, port 8883)."""

    config_file: Path
    state_dir: Path
    claim: Claim | None  # None: already provisioned
    ca_file: Path | None = None
    mqtt: str | None = None


def plan(config_file: Path, flags: dict[str, str | None]) -> Plan:
    """From the flags, the QR text and the configuration file (when it exists); raises
    SettingsError naming what is missing or wrong."""
    raw = _read(config_file)
    folder = config_file.parent.resolve()
    state = flags.get("state_dir") or raw.get("state_dir")
    state_dir = folder / str(state) if state else DEFAULT_STATE
    ca = flags.get("ca") or _table(raw, "credentials").get("ca_file")
    ca_file = folder / str(ca) if ca else None
    if "device_id" in raw or (state_dir / IDENTITY).exists():
        return Plan(config_file, state_dir, None, ca_file)
    given = {**_table(raw, "provisioning"), **_qr(flags.get("qr"))}
    given.update({k: v for k, v in flags.items() if v is not None})
    server = str(given.get("server") or raw.get("server") or "").rstrip("/")
    if urlsplit(server).scheme not in ("http", "https"):
        raise SettingsError("--server: the server's http:// or https:// URL is required")
    claim_id, secret = given.get("claim_id"), given.get("secret")
    if not isinstance(claim_id, str) or not isinstance(secret, str) or not claim_id or not secret:
        raise SettingsError("--claim-id and --secret (or --qr): the claim is required")
    name = given.get("name")
    claim = Claim(server, claim_id, secret, str(name) if name else None)
    return Plan(config_file, state_dir, claim, ca_file, flags.get("mqtt"))


def run(chosen: Plan) -> Json:
    """Enrolls and keeps the answer; {} when already provisioned. Raises Refused."""
    identity_file = chosen.state_dir / IDENTITY
    if chosen.claim is None:
        return {}
    state_folder(chosen.state_dir)
    key = keys.private_key(chosen.state_dir / FILES["key_file"])
    answer, ca = asyncio.run(_enroll(chosen.claim, keys.csr(key), chosen.ca_file))
    write_bytes(chosen.state_dir / FILES["api_key_file"], str(answer["api_key"]).encode() + b"\n")
    write_bytes(chosen.state_dir / FILES["certificate_file"], str(answer["certificate"]).encode())
    write_bytes(chosen.state_dir / FILES["ca_file"], ca)
    identity = {
        "server": chosen.claim.server,
        "device_id": answer["id"],
        "root_scope": answer["root_scope"],
        "mqtt": chosen.mqtt or f"mqtts://{answer['broker']}:8883",
        "credentials": FILES,
    }
    write_json(identity_file, identity)  # last: its presence means provisioned
    if not chosen.config_file.exists():
        _write_config(chosen)
    return dict(answer)


async def _enroll(claim: Claim, csr: str, ca_file: Path | None) -> tuple[Json, bytes]:
    body: Json = {"claim_id": claim.claim_id, "secret": claim.secret, "csr": csr}
    if claim.name:
        body["name"] = claim.name
    timeout = aiohttp.ClientTimeout(total=60)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.post(claim.server + ENROLL, json=body, ssl=tls(ca_file)) as response:
                answer = await response.json(content_type=None)
                if response.status != 201:
                    raise Refused(_refusal(response.status, answer, response.headers))
            async with session.get(claim.server + ROOT_CA, ssl=tls(ca_file)) as response:
                if response.status != 200:
                    raise Refused(f"the site CA: {response.status}")
                return dict(answer), await response.read()
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as failed:
        raise Refused(f"cannot reach {claim.server}: {failed or type(failed).__name__}") from None


def _refusal(status: int, answer: Any, headers: Any) -> str:
    message = answer.get("message", "") if isinstance(answer, dict) else ""
    if status == 429:
        message += f" (try again in {headers.get('Retry-After', '?')} s)"
    return f"the server refused the enrollment ({status}): {message}".rstrip(": ")


def _qr(where: str | None) -> Json:
    """The QR code's text, from a file or `-` (standard input): the enroll URL gives the
    server."""
    if where is None:
        return {}
    try:
        text = sys.stdin.read() if where == "-" else Path(where).read_text("utf-8")
        payload = json.loads(text)
        enroll = str(payload["enroll"])
        return {
            "server": enroll.removesuffix(ENROLL),
            "claim_id": payload["claim_id"],
            "secret": payload["secret"],
        }
    except (OSError, ValueError, KeyError, TypeError) as bad:
        raise SettingsError(f"--qr: not a claim's QR text ({bad!r})") from None


def _table(raw: Json, key: str) -> Json:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise SettingsError(f"{key}: must be a table")
    return value


def _read(config_file: Path) -> Json:
    if not config_file.exists():
        return {}
    try:
        text = config_file.read_text("utf-8")
        raw = tomllib.loads(text) if config_file.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as bad:
        raise SettingsError(f"{config_file}: {bad}") from None
    if not isinstance(raw, dict):
        raise SettingsError(f"{config_file}: must hold a table of settings")
    return raw


def _write_config(chosen: Plan) -> None:
    """The smallest configuration that runs (the rest comes from identity.json), in the
    file's format; add the features' sections to it (docs/agent.md)."""
    assert chosen.claim is not None
    chosen.config_file.parent.mkdir(parents=True, exist_ok=True)
    values = {"server": chosen.claim.server, "state_dir": str(chosen.state_dir)}
    if chosen.config_file.suffix == ".toml":
        lines = [f"{key} = {json.dumps(value)}" for key, value in values.items()]
        text = "# Written by edge agent provision: add [twin], [commands], [jobs], ...\n"
        write_bytes(chosen.config_file, (text + "\n".join(lines) + "\n").encode())
    else:
        write_json(chosen.config_file, values)
