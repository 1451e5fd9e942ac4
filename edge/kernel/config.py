"""Every setting, declared once: name, type, default, `EDGE_*` variable, flag and help.

Precedence: defaults < config file (TOML) < environment < flags. A bad value raises
ConfigError with one line naming the setting; the CLI prints it and exits with code 2.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit


class ConfigError(Exception):
    pass


class Secret:
    """A value that never shows itself in repr, str or logs."""

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


Parser = Callable[[Any], Any]
T = TypeVar("T")
MIB = 1024 * 1024
GIB = 1024 * MIB


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _int_range(low: int, high: int) -> Parser:
    def parse(value: Any) -> int:
        if isinstance(value, bool | float):
            raise ValueError(f"must be a whole number from {low} to {high}")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"must be a whole number from {low} to {high}") from None
        if not low <= number <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return number

    return parse


def _seconds(low: float, high: float) -> Parser:
    """A duration in seconds; fractions allowed (a test may want a quarter of a second)."""

    def parse(value: Any) -> float:
        message = f"must be a number of seconds from {low:g} to {high:g}"
        if isinstance(value, bool):
            raise ValueError(message)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if not low <= number <= high:
            raise ValueError(message)
        return number

    return parse


def _networks(value: Any) -> tuple[str, ...]:
    """Addresses or networks (CIDR), normalized: '10.0.0.1' -> '10.0.0.1/32'."""
    items = value if isinstance(value, list) else str(value).split(",")
    out = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        try:
            out.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ValueError(f"'{item}' is not an IP address or network") from None
    return tuple(out)


def _choice(*options: str) -> Parser:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return text

    return parse


def _url(value: Any) -> str:
    text = _text(value)
    if not text.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return text.rstrip("/")


def _uri(value: Any) -> str:
    text = _text(value)
    if not text.startswith(("mailto:", "https://", "http://", "tel:")):
        raise ValueError("must be a URI such as mailto:security@example.org or https://...")
    return text


def _email(value: Any) -> str:
    text = _text(value)
    local, at, domain = text.partition("@")
    if not (local and at and domain) or " " in text:
        raise ValueError("must be an e-mail address")
    return text


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _names(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    names = tuple(str(n).strip() for n in items if str(n).strip())
    if not names:
        raise ValueError("must list at least one host name or address")
    return names


def _path(value: Any) -> Path:
    return Path(_text(value)).expanduser()


def _secret(value: Any) -> Secret:
    return Secret(_text(value))


def _long_secret(value: Any) -> Secret:
    """A bearer token an operator chose: long enough not to be guessed."""
    text = _text(value)
    if len(text) < 16 or not text.isascii() or not text.isprintable() or " " in text:
        raise ValueError("must be at least 16 printable ASCII characters, no spaces")
    return Secret(text)


def _optional(parse: Parser) -> Parser:
    def wrapped(value: Any) -> Any:
        return None if value is None or value == "" else parse(value)

    return wrapped


def _setting(default: T, parse: Parser, help: str) -> T:
    """A field of Config that is also a setting: its parser and help ride in its metadata."""
    return field(default=default, metadata={"parse": parse, "help": help})


@dataclass(frozen=True)
class Config:
    """The settings, in the order the README table and edge.toml list them."""

    data_dir: Path = _setting(
        Path("./edge-data"),
        _path,
        "Folder holding the database, keys and files",
    )
    host: str = _setting("127.0.0.1", _text, "Address to listen on; 0.0.0.0 to serve the LAN")
    port: int = _setting(8080, _int_range(1, 65535), "HTTP port")
    public_url: str | None = _setting(
        None,
        _optional(_url),
        "URL clients use to reach this server (default: http://HOST:PORT)",
    )
    log_format: str = _setting("text", _choice("text", "json"), "Log line format: text or json")
    log_level: str = _setting(
        "info",
        _choice("debug", "info", "warning", "error"),
        "Least severe level logged",
    )
    access_log: bool = _setting(
        True,
        _bool,
        "Log one line per request (method, path without query, status, time, client, account)",
    )
    admin_email: str = _setting("admin@localhost", _email, "E-mail of the first staff account")
    admin_password: Secret | None = _setting(
        None,
        _optional(_secret),
        "Password of the first staff account (default: generated, saved in initial-admin.txt"
        " and, with text logs, printed once)",
    )
    max_body_bytes: int = _setting(
        16 * 1024 * 1024,
        _int_range(1024, 1 << 34),
        "Largest request body accepted, in bytes",
    )
    shutdown_timeout: int = _setting(
        10,
        _int_range(1, 600),
        "Seconds to let in-flight requests finish on SIGTERM",
    )
    header_timeout: float = _setting(
        10.0,
        _seconds(0.1, 3600),
        "Seconds a client has to send its request headers; slower connections are closed",
    )
    body_timeout: float = _setting(
        60.0,
        _seconds(0.1, 3600),
        "Seconds a client has to send a request body once it is read; else 408",
    )
    body_min_rate: int = _setting(
        500,
        _int_range(0, 1 << 30),
        "Bytes a second a streamed upload must bring over each body_timeout; else 408 (0: off)",
    )
    send_timeout: float = _setting(
        60.0,
        _seconds(0.1, 3600),
        "Seconds a client may take no bytes of a file download before it is cut off",
    )
    keepalive_timeout: float = _setting(
        75.0,
        _seconds(0.1, 3600),
        "Seconds an idle keep-alive connection is kept open between requests",
    )
    max_connections_per_address: int = _setting(
        512,
        _int_range(1, 1_000_000),
        "Open connections allowed from one client address; more are closed at once",
    )
    trusted_proxies: tuple[str, ...] = _setting(
        (),
        _networks,
        "Reverse proxies (addresses or CIDR networks, comma-separated) whose "
        "X-Forwarded-For is believed",
    )
    event_loop: str = _setting(
        "uvloop",
        _choice("uvloop", "asyncio"),
        "Event loop of `edge serve`: uvloop (faster) or asyncio (the standard library's)",
    )
    security_contact: str | None = _setting(
        None,
        _optional(_uri),
        "security.txt Contact (default: mailto:ADMIN_EMAIL)",
    )
    security_expires_days: int = _setting(
        180,
        _int_range(1, 365),
        "security.txt Expires, in days from the time it is served",
    )
    security_languages: str = _setting("en", _text, "security.txt Preferred-Languages")
    tls_cert: Path | None = _setting(
        None,
        _optional(_path),
        "PEM certificate (chain) to serve HTTPS with; needs tls_key",
    )
    tls_key: Path | None = _setting(None, _optional(_path), "PEM private key of tls_cert")
    tls_local_ca: bool = _setting(
        False,
        _bool,
        "Serve HTTPS with a certificate from the site's own CA (ca/ca.pem) when no tls_cert",
    )
    tls_hostnames: tuple[str, ...] | None = _setting(
        None,
        _optional(_names),
        "Names and addresses the local-CA certificate is issued for (comma-separated;"
        " default: localhost, 127.0.0.1, the host of public_url and mqtt_broker_host)",
    )
    device_certificate_days: int = _setting(
        365,
        _int_range(1, 3650),
        "Days a device certificate from the site CA lasts (never past the CA's own end);"
        " devices renew before it ends (docs/provisioning.md)",
    )
    device_certificate_renewal_seconds: int = _setting(
        60,
        _int_range(0, 86400),
        "Least seconds between two certificates issued to a device before it may renew"
        " (each renewal is a registry row and a CRL entry); 0: no limit",
    )
    device_write_rate: int = _setting(
        100,
        _int_range(1, 1_000_000),
        "HTTP writes (POST, PUT, PATCH, DELETE) per second one device may make, all its"
        " credentials together; more are 429 with Retry-After (people are not limited)",
    )
    device_write_burst: int = _setting(
        200,
        _int_range(1, 1_000_000),
        "HTTP writes one device may make at once before device_write_rate paces it",
    )
    hsts_max_age: int = _setting(
        31536000,
        _int_range(0, 63072000),
        "Strict-Transport-Security max-age in seconds, sent when serving HTTPS; 0 sends none",
    )
    smtp_host: str | None = _setting(
        None,
        _optional(_text),
        "SMTP server for outgoing mail (default: none, mail is written to outbox/mail/)",
    )
    smtp_port: int = _setting(587, _int_range(1, 65535), "SMTP server port")
    smtp_security: str = _setting(
        "starttls",
        _choice("none", "starttls", "tls"),
        "SMTP connection security: none, starttls or tls",
    )
    smtp_username: str | None = _setting(
        None,
        _optional(_text),
        "SMTP user name (default: no login)",
    )
    smtp_password: Secret | None = _setting(
        None,
        _optional(_secret),
        "SMTP password of smtp_username",
    )
    mail_from: str = _setting("edge@localhost", _email, "Sender address of outgoing mail")
    mail_max_attempts: int = _setting(
        8,
        _int_range(1, 100),
        "Delivery attempts of a mail or SMS before it is marked failed",
    )
    sms_gateway_url: str | None = _setting(
        None,
        _optional(_url),
        "HTTP gateway that sends SMS (default: none, SMS are written to outbox/sms/)",
    )
    sms_gateway_body: str = _setting(
        '{"to": "{to}", "text": "{text}"}',
        _text,
        "Body POSTed to sms_gateway_url; {to} and {text} are filled in (JSON or form)",
    )
    sms_gateway_auth_header: Secret | None = _setting(
        None,
        _optional(_secret),
        "Authorization header value sent to sms_gateway_url",
    )
    mqtt_broker_host: str | None = _setting(
        None,
        _optional(_text),
        "Host name devices are given to reach the MQTT broker (default: the host of public_url)",
    )
    trash_retention_days: int = _setting(
        30,
        _int_range(0, 3650),
        "Days a deleted user, device, group, role or project stays restorable before it is erased",
    )
    data_max_value_bytes: int = _setting(
        1024 * 1024,
        _int_range(1024, 64 * 1024 * 1024),
        "Largest data value, in bytes of its stored JSON (larger ones are a 400)",
    )
    data_max_bulk_paths: int = _setting(
        100,
        _int_range(1, 10000),
        "Most paths one bulk data request may name, across its jobs",
    )
    search_max_steps: int = _setting(
        20_000_000,
        _int_range(100_000, 10_000_000_000),
        "SQLite steps one list search may take (about 0.3 s of one core); past them the"
        " search is refused with 400 (too broad)",
    )
    search_max_seconds: float = _setting(
        2.0,
        _seconds(0.1, 600),
        "Seconds one list search may hold the search worker (wall clock, beside"
        " search_max_steps); past them the search is refused with 400 (too broad)",
    )
    mqtt_port: int = _setting(
        1883,
        _int_range(0, 65535),
        "MQTT over TCP port on HOST; 0 turns it off",
    )
    mqtt_tls_port: int = _setting(
        8883,
        _int_range(0, 65535),
        "MQTT over TLS port on HOST (site-CA server certificate, device certificates); 0: off",
    )
    mqtt_ws_port: int = _setting(
        8083,
        _int_range(0, 65535),
        "MQTT over WebSockets port on HOST; 0 turns it off",
    )
    mqtt_wss_port: int = _setting(
        8084,
        _int_range(0, 65535),
        "MQTT over WebSockets with TLS (wss) port on HOST, TLS as for mqtt_tls_port; 0: off",
    )
    mqtt_max_connections: int = _setting(
        2000,
        _int_range(1, 1_000_000),
        "Most MQTT connections at once, all listeners together; more are closed at once",
    )
    mqtt_max_connections_per_address: int = _setting(
        512,
        _int_range(1, 1_000_000),
        "Open MQTT connections allowed from one client address, all listeners together; "
        "more are closed at once",
    )
    mqtt_max_message_bytes: int = _setting(
        256 * 1024,
        _int_range(1024, 256 * 1024 * 1024),
        "Largest MQTT packet a client may send (topic, payload and headers), in bytes",
    )
    mqtt_rate_limit: int = _setting(
        1000,
        _int_range(1, 10_000_000),
        "Messages and subscription changes per second per MQTT client; more are slowed",
    )
    mqtt_queue_messages: int = _setting(
        1000,
        _int_range(1, 1_000_000),
        "QoS 1/2 messages waiting for one MQTT client before it is disconnected",
    )
    mqtt_queue_bytes: int = _setting(
        1024 * 1024,
        _int_range(65536, 1 << 32),
        "Bytes waiting for one MQTT client: past it QoS 0 messages to it are dropped",
    )
    mqtt_max_subscriptions: int = _setting(
        500,
        _int_range(1, 100_000),
        "Topic filters one MQTT session may hold; SUBACK refuses more with 0x80",
    )
    mqtt_account_sessions: int = _setting(
        10,
        _int_range(1, 100_000),
        "Persistent MQTT sessions (clean session false) one device or user may keep",
    )
    mqtt_account_connections: int = _setting(
        16,
        _int_range(1, 100_000),
        "Open MQTT connections one device or user may hold, clean and persistent sessions "
        "alike; more are refused (CONNACK 3)",
    )
    mqtt_account_queue_bytes: int = _setting(
        64 * 1024 * 1024,
        _int_range(65536, 1 << 40),
        "Bytes of QoS 1/2 messages waiting for all the MQTT sessions of one device or user",
    )
    mqtt_account_retained_bytes: int = _setting(
        16 * 1024 * 1024,
        _int_range(0, 1 << 40),
        "Bytes of retained MQTT messages (topic and payload) one device or user may keep",
    )
    mqtt_session_expiry_hours: int = _setting(
        168,
        _int_range(1, 87600),
        "Hours a persistent MQTT session (clean session false) is kept while offline",
    )
    files_max_upload_bytes: int = _setting(
        5 * GIB,
        _int_range(1, 5 * GIB),
        "Largest single-part upload or part accepted through a presigned URL, in bytes "
        "(max_body_bytes does not apply to uploads)",
    )
    files_min_part_bytes: int = _setting(
        5 * MIB,
        _int_range(1, 5 * GIB),
        "Smallest part of a multipart upload, except its last part, in bytes",
    )
    files_max_parts: int = _setting(10000, _int_range(1, 10000), "Most parts of a multipart upload")
    files_group_quota_bytes: int | None = _setting(
        None,
        _optional(_int_range(1, 1 << 60)),
        "Most bytes of files one group may hold (default: no quota)",
    )
    files_quota_bytes: int | None = _setting(
        None,
        _optional(_int_range(1, 1 << 60)),
        "Most bytes of files the whole installation may hold (default: no quota)",
    )
    console_idle_minutes: float = _setting(
        15.0,
        _seconds(0.01, 1440),
        "Minutes without input after which the console signs its person out",
    )
    tunnel_max_bytes_per_second: int = _setting(
        0,
        _int_range(0, 1 << 40),
        "Bytes per second one device tunnel relays, all its streams together (0: no limit)",
    )
    tunnel_max_streams: int = _setting(
        16,
        _int_range(1, 1000),
        "Connections (streams) one device tunnel carries at once",
    )
    tunnel_max_open_per_device: int = _setting(
        4,
        _int_range(1, 1000),
        "Tunnels open to one device at once; opening one more is refused (409)",
    )
    tunnel_idle_timeout: float = _setting(
        900.0,
        _seconds(0.1, 86400),
        "Seconds a tunnel stream may carry no byte either way before it is closed",
    )
    tunnel_connect_timeout: float = _setting(
        15.0,
        _seconds(0.1, 300),
        "Seconds a new tunnel stream waits for the device's end to connect",
    )
    command_rate_limit: int = _setting(
        60,
        _int_range(1, 100000),
        "Commands one device may be sent per minute; more are refused with 429",
    )
    command_caller_rate_limit: int = _setting(
        20,
        _int_range(1, 100000),
        "Commands one caller may send one device per minute, within command_rate_limit;"
        " more are refused with 429",
    )
    command_retention_hours: int = _setting(
        24,
        _int_range(1, 24 * 3650),
        "Hours a finished command (answered, timed out, expired, canceled) is kept",
    )
    command_device_bytes: int = _setting(
        4 * 1024 * 1024,
        _int_range(64 * 1024, 1024 * 1024 * 1024),
        "Bytes of payloads one caller's commands to a device may keep, half of it while they"
        " wait (more are refused with 429), and bytes of the replies to them (past it a reply's"
        " payload is dropped)",
    )
    twin_max_bytes: int = _setting(
        8192,
        _int_range(256, 1024 * 1024),
        "Largest device twin: desired and reported together, as compact JSON, in bytes",
    )
    jobs_tick_seconds: int = _setting(
        1,
        _int_range(1, 3600),
        "Seconds between the job scheduler's ticks (releases, timeouts, the abort rule)",
    )
    jobs_max_targets: int = _setting(
        10000,
        _int_range(1, 1000000),
        "Most devices one job may target; more are refused with 400, and a continuous job"
        " stops growing there",
    )
    jobs_max_running: int = _setting(
        100,
        _int_range(1, 100000),
        "Most jobs one organization may have running (scheduled or in progress); more are"
        " refused with 409",
    )
    jobs_max_running_per_user: int = _setting(
        10,
        _int_range(1, 100000),
        "Most running jobs one maker may have in an organization (org admins are not held to"
        " it); more are refused with 409",
    )
    jobs_max_running_per_project: int = _setting(
        50,
        _int_range(1, 100000),
        "Most running jobs of one project, whoever made them (org admins are not held to it);"
        " more are refused with 409",
    )
    jobs_admin_reserve: int = _setting(
        10,
        _int_range(0, 100000),
        "Running-job places of an organization kept for its org admins: others' jobs are"
        " refused with 409 once the org runs jobs_max_running minus this; below"
        " jobs_max_running, or the server does not start",
    )
    jobs_create_per_hour: int = _setting(
        60,
        _int_range(1, 100000),
        "Jobs one maker (not an org admin) may make per hour; more are refused with 429 and"
        " Retry-After",
    )
    jobs_retention_days: int = _setting(
        30,
        _int_range(1, 36500),
        "Days an ended job (completed, canceled, aborted) is kept with its executions before"
        " the hourly sweep deletes it",
    )
    events_window_seconds: int = _setting(
        300,
        _int_range(300, 86400),
        "Seconds a live change event is kept for clients that resume with Last-Event-ID",
    )
    events_window_count: int = _setting(
        10000,
        _int_range(10000, 1000000),
        "Most live change events kept for clients that resume with Last-Event-ID",
    )
    events_max_streams: int = _setting(
        5,
        _int_range(1, 1000),
        "Event streams (GET /v2/events) one account may hold open at once; more get 429",
    )
    events_stream_buffer: int = _setting(
        1000,
        _int_range(16, 100000),
        "Events one stream may fall behind its reader before the server cuts it off",
    )
    audit_retention_days: int = _setting(
        365,
        _int_range(1, 36500),
        "Days an audit log event is kept before the hourly sweep deletes it",
    )
    pulse_retention_hours: int = _setting(
        24,
        _int_range(1, 24 * 366),
        "Hours the site's one-minute pulse samples (GET /v2/pulse, the console's charts) are"
        " kept before the next flush deletes them",
    )
    backup_keep: int = _setting(
        7,
        _int_range(1, 3650),
        "Backups `edge backup --into FOLDER` keeps there: the oldest beyond this are removed",
    )
    metrics: bool = _setting(
        True,
        _bool,
        "Serve GET /metrics (Prometheus text) to staff and to metrics_token; false: 404",
    )
    metrics_token: Secret | None = _setting(
        None,
        _optional(_long_secret),
        "Bearer token a Prometheus scraper sends to GET /metrics (staff tokens work too)",
    )
    memory_trace_frames: int = _setting(
        0,
        _int_range(0, 100),
        "Trace Python allocations (this many frames each) for the SIGUSR2 memory report;"
        " 0: off (tracing slows the server)",
    )

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None or self.tls_local_ca

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        return self.local_url

    @property
    def certificate_names(self) -> tuple[str, ...]:
        """The names the local-CA server certificate is issued for: `tls_hostnames` when
        given, else localhost, 127.0.0.1 and the names clients and devices are given (the
        host of the public URL, the broker's host), so that following public_url is enough
        for devices to check the broker's certificate."""
        if self.tls_hostnames:
            return self.tls_hostnames
        given = ("localhost", "127.0.0.1", urlsplit(self.base_url).hostname, self.broker_host)
        return tuple(dict.fromkeys(name for name in given if name))

    @property
    def local_url(self) -> str:
        """The URL this server answers on itself (the public URL may be a proxy's)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    @property
    def broker_host(self) -> str:
        """What devices are told as `broker`: a host name, no scheme, no port."""
        return self.mqtt_broker_host or urlsplit(self.base_url).hostname or "localhost"

    def data_max_body_bytes(self) -> int:
        """Body limit of data requests: above the value limit, so that a value too large
        is a 400 naming it rather than a 413 (JSON escapes can make a body several times
        longer than the value it carries)."""
        return max(self.max_body_bytes, 8 * self.data_max_value_bytes)

    @property
    def contact(self) -> str:
        return self.security_contact or f"mailto:{self.admin_email}"


@dataclass(frozen=True)
class Setting:
    """One setting as the CLI, the loader and the docs see it, read from Config's fields."""

    name: str
    parse: Parser
    default: Any
    help: str

    @property
    def env(self) -> str:
        return "EDGE_" + self.name.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.metadata["parse"], f.default, f.metadata["help"]) for f in fields(Config)
)
BY_NAME = {s.name: s for s in SETTINGS}


def load(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Config:
    """Build the config from the four layers, validating every value that was given."""
    values: dict[str, Any] = {s.name: s.default for s in SETTINGS}
    if config_file is not None:
        values.update(_parse_layer(_read_file(config_file), lambda s: f"{s.name} in {config_file}"))
    environ = env or {}
    from_env = {s.name: environ[s.env] for s in SETTINGS if s.env in environ}
    values.update(_parse_layer(from_env, lambda s: f"{s.name} ({s.env})"))
    given = {k: v for k, v in (flags or {}).items() if v is not None and k in BY_NAME}
    values.update(_parse_layer(given, lambda s: f"{s.name} ({s.flag})"))
    if (values["tls_cert"] is None) != (values["tls_key"] is None):
        missing = "tls_key" if values["tls_key"] is None else "tls_cert"
        raise ConfigError(f"invalid setting {missing}: tls_cert and tls_key go together")
    _check_reserve(values)
    return Config(**values)


def _check_reserve(values: Mapping[str, Any]) -> None:
    """A reserve of every running-job place (or more) leaves no place for anyone but the
    org admins, and their refusal blamed the org's running jobs when it ran none: an
    operator who lowered jobs_max_running below the reserve's default stopped every
    other maker's jobs without a word. Refused at start instead, naming both settings."""
    reserve, most = values["jobs_admin_reserve"], values["jobs_max_running"]
    if reserve >= most:
        raise ConfigError(
            f"invalid setting jobs_admin_reserve: {reserve} must be below jobs_max_running"
            f" ({most}), or no one but an org admin could run a job: lower jobs_admin_reserve"
            " or raise jobs_max_running"
        )


def _parse_layer(raw: Mapping[str, Any], where: Callable[[Setting], str]) -> dict[str, Any]:
    parsed = {}
    for name, value in raw.items():
        setting = BY_NAME[name]
        try:
            parsed[name] = setting.parse(value)
        except ValueError as exc:
            raise ConfigError(f"invalid setting {where(setting)}: {exc}") from None
    return parsed


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(BY_NAME))
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]} in {path}")
    return data


def settings_table() -> str:
    """The README's configuration table, rendered from the declarations (a test compares)."""
    rows = ["| Setting | Flag | Environment | Default | Meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        shown = ",".join(s.default) if isinstance(s.default, tuple) else s.default
        shown = f"{shown:g}" if isinstance(shown, float) else shown
        default = "(none)" if s.default is None or s.default == () else f"`{shown}`"
        rows.append(f"| `{s.name}` | `{s.flag}` | `{s.env}` | {default} | {s.help} |")
    return "\n".join(rows)
