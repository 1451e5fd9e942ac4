"""The agent's configuration file (docs/agent.md): TOML (`.toml`) or JSON (any other name),
read once at start. Every key is checked here, and a bad or unknown one is refused in one
line naming it (exit code 2), as the server refuses a bad setting. Paths are taken from
the file's own folder when relative. The API key is read from its file (owner-only, or
refused), or from EDGE_DEVICE_API_KEY when the file names none, and kept out of `repr`.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from edge_agent.files import UnsafeFile, read_secret

API_KEY_ENV = "EDGE_DEVICE_API_KEY"
Table = dict[str, Any]
Address = tuple[str, int]


class SettingsError(Exception):
    """A configuration the agent cannot run with; the message names the key."""


@dataclass(frozen=True)
class TwinSettings:
    reported_file: Path
    apply: list[str] | None = None  # the program that applies a delta
    poll_seconds: float = 2.0
    timeout_seconds: float = 60.0


@dataclass(frozen=True)
class CommandSettings:
    handler: list[str]
    timeout_seconds: float = 55.0
    concurrency: int = 4


@dataclass(frozen=True)
class JobSettings:
    handler: list[str]
    timeout_seconds: float = 3600.0
    idempotent: bool = False  # may an execution's handler run again after a restart


@dataclass(frozen=True)
class CertificateSettings:
    """When the client certificate is renewed: once less than a third of its life, or
    less than `renew_before_days`, is left, whichever comes first; looked at every
    `check_seconds` (renewal.py)."""

    renew_before_days: float = 30.0
    check_seconds: float = 3600.0


@dataclass(frozen=True)
class Settings:
    server: str  # the server's base URL, for the routes (a tunnel's token)
    mqtt_url: str  # mqtt://host:port or mqtts://host:port
    device_id: str
    root_scope: str
    api_key: str = field(repr=False)  # "" when the certificate signs in and nothing needs it
    state_dir: Path | None = None  # the agent's own files (`edge tunnel agent` keeps none)
    ca_file: Path | None = None  # the site CA, for https:// and mqtts://
    certificate_file: Path | None = None  # MQTT sign-in by TLS client certificate ...
    key_file: Path | None = None  # ... and its private key (owner-only)
    client_id: str = "edge-agent"
    reconnect_min: float = 1.0
    reconnect_max: float = 60.0
    twin: TwinSettings | None = None
    commands: CommandSettings | None = None
    jobs: JobSettings | None = None
    services: dict[str, Address] = field(default_factory=dict)  # tunnels: case-folded name
    certificates: CertificateSettings = field(default_factory=CertificateSettings)

    @property
    def namespace(self) -> str:
        """The device's own topics: `<root_scope>/devices/<device_id>`."""
        return f"{self.root_scope}/devices/{self.device_id}"


def load(path: Path) -> Settings:
    """The settings of the file at `path`; SettingsError naming what is wrong."""
    try:
        text = path.read_text("utf-8")
        raw = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except OSError as failed:
        raise SettingsError(f"{path}: {failed.strerror or failed}") from None
    except ValueError as bad:
        raise SettingsError(f"{path}: not valid {_format(path)}: {bad}") from None
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: must hold a table of settings")
    return from_table(raw, path.parent.resolve())


TOP = {"server", "mqtt", "device_id", "root_scope", "state_dir", "client_id", "credentials"}
SECTIONS = {"reconnect", "twin", "commands", "jobs", "tunnels", "provisioning", "certificates"}
CREDENTIALS = {"api_key_file", "ca_file", "certificate_file", "key_file"}
PROVISIONING = {"claim_id", "secret", "name"}  # read by `edge agent provision` alone
IDENTITY = "identity.json"  # in the state folder: what `edge agent provision` got


def from_table(raw: Table, folder: Path) -> Settings:
    _known("", raw, TOP | SECTIONS)
    _known("provisioning.", _table(raw, "provisioning"), PROVISIONING)
    state_dir = _path(raw, "state_dir", folder, required=True)
    assert state_dir is not None
    raw = with_identity(raw, state_dir)
    server = _url(raw, "server", ("http", "https"))
    credentials = _table(raw, "credentials")
    _known("credentials.", credentials, CREDENTIALS)
    shortest, longest = _reconnect(raw)
    certificate, key_file = _certificate(credentials, folder)
    settings = Settings(
        server=server,
        mqtt_url=_mqtt(raw, server),
        device_id=_text(raw, "device_id"),
        root_scope=_text(raw, "root_scope"),
        api_key=_api_key(credentials, folder, optional=certificate is not None),
        state_dir=state_dir,
        ca_file=_path(credentials, "ca_file", folder, prefix="credentials."),
        certificate_file=certificate,
        key_file=key_file,
        client_id=_text(raw, "client_id", "edge-agent"),
        reconnect_min=shortest,
        reconnect_max=longest,
        twin=_twin(raw, folder, state_dir),
        commands=_commands(raw),
        jobs=_jobs(raw),
        services=_services(raw),
        certificates=_certificates(raw),
    )
    _check_sign_in(settings)
    return settings


def with_identity(raw: Table, state_dir: Path) -> Table:
    """The file's settings, with what provisioning wrote (`<state_dir>/identity.json`:
    the server, the device's ID, root scope, broker and credentials) where the file says
    nothing: a configuration of handlers alone runs once the device is provisioned."""
    if "device_id" in raw:
        return raw
    try:
        identity = json.loads((state_dir / IDENTITY).read_text("utf-8"))
    except FileNotFoundError:
        raise SettingsError("device_id: required (or run `edge agent provision` first)") from None
    except (OSError, ValueError) as bad:
        raise SettingsError(f"{state_dir / IDENTITY}: unreadable: {bad}") from None
    files = {k: str(state_dir / v) for k, v in identity.get("credentials", {}).items()}
    credentials = {**files, **_table(raw, "credentials")}
    return {**identity, **raw, "credentials": credentials}


def _certificate(credentials: Table, folder: Path) -> tuple[Path | None, Path | None]:
    certificate = _path(credentials, "certificate_file", folder, prefix="credentials.")
    key_file = _path(credentials, "key_file", folder, prefix="credentials.")
    if (certificate is None) != (key_file is None):
        raise SettingsError("credentials.certificate_file: goes with credentials.key_file")
    if key_file is not None:
        try:
            read_secret(key_file)  # a private key others may read is refused, as ssh does
        except UnsafeFile as unsafe:
            raise SettingsError(f"credentials.key_file: {unsafe}") from None
    return certificate, key_file


def _check_sign_in(settings: Settings) -> None:
    """A certificate signs in over TLS only; tunnels and jobs ask the server with the key."""
    if settings.certificate_file is not None and not settings.mqtt_url.startswith("mqtts:"):
        raise SettingsError("mqtt: a client certificate signs in over mqtts:// only")
    if not settings.api_key and (settings.services or settings.jobs is not None):
        raise SettingsError(
            f"credentials.api_key_file: tunnels and jobs need it (or ${API_KEY_ENV})"
        )


def _reconnect(raw: Table) -> tuple[float, float]:
    reconnect = _table(raw, "reconnect")
    _known("reconnect.", reconnect, {"min_seconds", "max_seconds"})
    shortest = _seconds(reconnect, "min_seconds", 1.0, "reconnect.")
    longest = _seconds(reconnect, "max_seconds", 60.0, "reconnect.")
    if longest < shortest:
        raise SettingsError("reconnect.max_seconds: must not be less than min_seconds")
    return shortest, longest


def _twin(raw: Table, folder: Path, state_dir: Path) -> TwinSettings | None:
    if "twin" not in raw:
        return None
    twin = _table(raw, "twin")
    _known("twin.", twin, {"reported_file", "apply", "poll_seconds", "timeout_seconds"})
    reported = _path(twin, "reported_file", folder, prefix="twin.")
    return TwinSettings(
        reported_file=reported or state_dir / "reported.json",
        apply=_program(twin, "apply", "twin.", required=False),
        poll_seconds=_seconds(twin, "poll_seconds", 2.0, "twin."),
        timeout_seconds=_seconds(twin, "timeout_seconds", 60.0, "twin."),
    )


def _commands(raw: Table) -> CommandSettings | None:
    if "commands" not in raw:
        return None
    commands = _table(raw, "commands")
    _known("commands.", commands, {"handler", "timeout_seconds", "concurrency"})
    handler = _program(commands, "handler", "commands.", required=True)
    assert handler is not None
    concurrency = commands.get("concurrency", 4)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise SettingsError("commands.concurrency: must be a whole number of at least 1")
    timeout = _seconds(commands, "timeout_seconds", 55.0, "commands.")
    return CommandSettings(handler, timeout, concurrency)


def _jobs(raw: Table) -> JobSettings | None:
    if "jobs" not in raw:
        return None
    jobs = _table(raw, "jobs")
    _known("jobs.", jobs, {"handler", "timeout_seconds", "idempotent"})
    handler = _program(jobs, "handler", "jobs.", required=True)
    assert handler is not None
    idempotent = jobs.get("idempotent", False)
    if not isinstance(idempotent, bool):
        raise SettingsError("jobs.idempotent: must be true or false")
    return JobSettings(handler, _seconds(jobs, "timeout_seconds", 3600.0, "jobs."), idempotent)


def _certificates(raw: Table) -> CertificateSettings:
    certificates = _table(raw, "certificates")
    _known("certificates.", certificates, {"renew_before_days", "check_seconds"})
    default = CertificateSettings()
    return CertificateSettings(
        renew_before_days=_seconds(
            certificates, "renew_before_days", default.renew_before_days, "certificates.", "days"
        ),
        check_seconds=_seconds(
            certificates, "check_seconds", default.check_seconds, "certificates."
        ),
    )


def _services(raw: Table) -> dict[str, Address]:
    tunnels = _table(raw, "tunnels")
    _known("tunnels.", tunnels, {"services"})
    services = _table(tunnels, "services", "tunnels.")
    return dict(service(name, str(where)) for name, where in services.items())


def service(name: str, where: str) -> tuple[str, Address]:
    """A tunnel's service: `PORT` (on 127.0.0.1) or `HOST:PORT`, its name case-folded."""
    if not name:
        raise SettingsError("tunnels.services: a service needs a name")
    try:
        return name.casefold(), address(where if ":" in where else f"127.0.0.1:{where}")
    except ValueError:
        raise SettingsError(f"tunnels.services.{name}: expected PORT or HOST:PORT") from None


def address(text: str) -> Address:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text}: expected HOST:PORT")
    return host.strip("[]"), int(port)


def _api_key(credentials: Table, folder: Path, *, optional: bool = False) -> str:
    where = _path(credentials, "api_key_file", folder, prefix="credentials.")
    if where is None:
        key = os.environ.get(API_KEY_ENV, "")
        if not key and not optional:
            raise SettingsError(f"credentials.api_key_file: required (or ${API_KEY_ENV})")
        return key
    try:
        return read_secret(where)
    except UnsafeFile as unsafe:
        raise SettingsError(f"credentials.api_key_file: {unsafe}") from None


def _mqtt(raw: Table, server: str) -> str:
    if "mqtt" not in raw:
        return f"mqtt://{urlsplit(server).hostname}:1883"
    return _url(raw, "mqtt", ("mqtt", "mqtts"))


def _url(raw: Table, key: str, schemes: tuple[str, ...]) -> str:
    value = _text(raw, key)
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.hostname:
        raise SettingsError(f"{key}: must be a URL of {' or '.join(schemes)}")
    try:
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise SettingsError(f"{key}: the port is not a number from 0 to 65535") from None
    return value.rstrip("/")


def _text(raw: Table, key: str, default: str | None = None, prefix: str = "") -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value:
        raise SettingsError(f"{prefix}{key}: required, a non-empty string")
    return value


def _path(
    raw: Table, key: str, folder: Path, *, prefix: str = "", required: bool = False
) -> Path | None:
    if key not in raw and not required:
        return None
    return folder / Path(_text(raw, key, prefix=prefix)).expanduser()


def _program(raw: Table, key: str, prefix: str, *, required: bool) -> list[str] | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{prefix}{key}: a program and its arguments, as a list of strings")
    return value


def _seconds(raw: Table, key: str, default: float, prefix: str, unit: str = "seconds") -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise SettingsError(f"{prefix}{key}: must be a positive number of {unit}")
    return float(value)


def _table(raw: Table, key: str, prefix: str = "") -> Table:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise SettingsError(f"{prefix}{key}: must be a table")
    return value


def _known(prefix: str, raw: Table, known: set[str]) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SettingsError(f"{prefix}{unknown[0]}: not a setting of the agent")


def _format(path: Path) -> str:
    return "TOML" if path.suffix == ".toml" else "JSON"
