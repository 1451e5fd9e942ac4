"""Every setting, declared once: name, type, default, `EDGE_*` variable, flag and help.

Precedence: defaults < config file (TOML) < environment < flags. A bad value raises
ConfigError with one line naming the setting; the CLI prints it and exits with code 2.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
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


@dataclass(frozen=True)
class Setting:
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


SETTINGS: tuple[Setting, ...] = (
    Setting("data_dir", _path, Path("./edge-data"), "Folder holding the database, keys and files"),
    Setting("host", _text, "127.0.0.1", "Address to listen on; 0.0.0.0 to serve the LAN"),
    Setting("port", _int_range(1, 65535), 8080, "HTTP port"),
    Setting(
        "public_url",
        _optional(_url),
        None,
        "URL clients use to reach this server (default: http://HOST:PORT)",
    ),
    Setting("log_format", _choice("text", "json"), "text", "Log line format: text or json"),
    Setting(
        "log_level",
        _choice("debug", "info", "warning", "error"),
        "info",
        "Least severe level logged",
    ),
    Setting(
        "access_log",
        _bool,
        True,
        "Log one line per request (method, path without query, status, time, client, account)",
    ),
    Setting("admin_email", _email, "admin@localhost", "E-mail of the first staff account"),
    Setting(
        "admin_password",
        _optional(_secret),
        None,
        "Password of the first staff account (default: generated, saved in initial-admin.txt"
        " and, with text logs, printed once)",
    ),
    Setting(
        "max_body_bytes",
        _int_range(1024, 1 << 34),
        16 * 1024 * 1024,
        "Largest request body accepted, in bytes",
    ),
    Setting(
        "shutdown_timeout",
        _int_range(1, 600),
        10,
        "Seconds to let in-flight requests finish on SIGTERM",
    ),
    Setting(
        "header_timeout",
        _seconds(0.1, 3600),
        10.0,
        "Seconds a client has to send its request headers; slower connections are closed",
    ),
    Setting(
        "body_timeout",
        _seconds(0.1, 3600),
        60.0,
        "Seconds a client has to send a request body once it is read; else 408",
    ),
    Setting(
        "body_min_rate",
        _int_range(0, 1 << 30),
        500,
        "Bytes a second a streamed upload must bring over each body_timeout; else 408 (0: off)",
    ),
    Setting(
        "send_timeout",
        _seconds(0.1, 3600),
        60.0,
        "Seconds a client may take no bytes of a file download before it is cut off",
    ),
    Setting(
        "keepalive_timeout",
        _seconds(0.1, 3600),
        75.0,
        "Seconds an idle keep-alive connection is kept open between requests",
    ),
    Setting(
        "max_connections_per_address",
        _int_range(1, 1_000_000),
        512,
        "Open connections allowed from one client address; more are closed at once",
    ),
    Setting(
        "trusted_proxies",
        _networks,
        (),
        "Reverse proxies (addresses or CIDR networks, comma-separated) whose "
        "X-Forwarded-For is believed",
    ),
    Setting(
        "event_loop",
        _choice("uvloop", "asyncio"),
        "uvloop",
        "Event loop of `edge serve`: uvloop (faster) or asyncio (the standard library's)",
    ),
    Setting(
        "security_contact",
        _optional(_uri),
        None,
        "security.txt Contact (default: mailto:ADMIN_EMAIL)",
    ),
    Setting(
        "security_expires_days",
        _int_range(1, 365),
        180,
        "security.txt Expires, in days from the time it is served",
    ),
    Setting("security_languages", _text, "en", "security.txt Preferred-Languages"),
    Setting(
        "tls_cert",
        _optional(_path),
        None,
        "PEM certificate (chain) to serve HTTPS with; needs tls_key",
    ),
    Setting("tls_key", _optional(_path), None, "PEM private key of tls_cert"),
    Setting(
        "tls_local_ca",
        _bool,
        False,
        "Serve HTTPS with a certificate from the site's own CA (ca/ca.pem) when no tls_cert",
    ),
    Setting(
        "tls_hostnames",
        _optional(_names),
        None,
        "Names and addresses the local-CA certificate is issued for (comma-separated;"
        " default: localhost, 127.0.0.1, the host of public_url and mqtt_broker_host)",
    ),
    Setting(
        "hsts_max_age",
        _int_range(0, 63072000),
        31536000,
        "Strict-Transport-Security max-age in seconds, sent when serving HTTPS; 0 sends none",
    ),
    Setting(
        "smtp_host",
        _optional(_text),
        None,
        "SMTP server for outgoing mail (default: none, mail is written to outbox/mail/)",
    ),
    Setting("smtp_port", _int_range(1, 65535), 587, "SMTP server port"),
    Setting(
        "smtp_security",
        _choice("none", "starttls", "tls"),
        "starttls",
        "SMTP connection security: none, starttls or tls",
    ),
    Setting("smtp_username", _optional(_text), None, "SMTP user name (default: no login)"),
    Setting("smtp_password", _optional(_secret), None, "SMTP password of smtp_username"),
    Setting("mail_from", _email, "edge@localhost", "Sender address of outgoing mail"),
    Setting(
        "mail_max_attempts",
        _int_range(1, 100),
        8,
        "Delivery attempts of a mail or SMS before it is marked failed",
    ),
    Setting(
        "sms_gateway_url",
        _optional(_url),
        None,
        "HTTP gateway that sends SMS (default: none, SMS are written to outbox/sms/)",
    ),
    Setting(
        "sms_gateway_body",
        _text,
        '{"to": "{to}", "text": "{text}"}',
        "Body POSTed to sms_gateway_url; {to} and {text} are filled in (JSON or form)",
    ),
    Setting(
        "sms_gateway_auth_header",
        _optional(_secret),
        None,
        "Authorization header value sent to sms_gateway_url",
    ),
    Setting(
        "mqtt_broker_host",
        _optional(_text),
        None,
        "Host name devices are given to reach the MQTT broker (default: the host of public_url)",
    ),
    Setting(
        "trash_retention_days",
        _int_range(0, 3650),
        30,
        "Days a deleted user, device, group, role or project stays restorable before it is erased",
    ),
    Setting(
        "data_max_value_bytes",
        _int_range(1024, 64 * 1024 * 1024),
        1024 * 1024,
        "Largest data value, in bytes of its stored JSON (larger ones are a 400)",
    ),
    Setting(
        "data_max_bulk_paths",
        _int_range(1, 10000),
        100,
        "Most paths one bulk data request may name, across its jobs",
    ),
    Setting("mqtt_port", _int_range(0, 65535), 1883, "MQTT over TCP port on HOST; 0 turns it off"),
    Setting(
        "mqtt_tls_port",
        _int_range(0, 65535),
        8883,
        "MQTT over TLS port on HOST (site-CA server certificate, device certificates); 0: off",
    ),
    Setting(
        "mqtt_ws_port",
        _int_range(0, 65535),
        8083,
        "MQTT over WebSockets port on HOST; 0 turns it off",
    ),
    Setting(
        "mqtt_wss_port",
        _int_range(0, 65535),
        8084,
        "MQTT over WebSockets with TLS (wss) port on HOST, TLS as for mqtt_tls_port; 0: off",
    ),
    Setting(
        "mqtt_max_connections",
        _int_range(1, 1_000_000),
        2000,
        "Most MQTT connections at once, all listeners together; more are closed at once",
    ),
    Setting(
        "mqtt_max_message_bytes",
        _int_range(1024, 256 * 1024 * 1024),
        256 * 1024,
        "Largest MQTT packet a client may send (topic, payload and headers), in bytes",
    ),
    Setting(
        "mqtt_rate_limit",
        _int_range(1, 10_000_000),
        1000,
        "Messages per second one MQTT client may publish; a faster one is slowed down",
    ),
    Setting(
        "mqtt_queue_messages",
        _int_range(1, 1_000_000),
        1000,
        "QoS 1/2 messages waiting for one MQTT client before it is disconnected",
    ),
    Setting(
        "mqtt_queue_bytes",
        _int_range(65536, 1 << 32),
        1024 * 1024,
        "Bytes waiting for one MQTT client: past it QoS 0 messages to it are dropped",
    ),
    Setting(
        "mqtt_max_subscriptions",
        _int_range(1, 100_000),
        500,
        "Topic filters one MQTT session may hold; SUBACK refuses more with 0x80",
    ),
    Setting(
        "mqtt_account_sessions",
        _int_range(1, 100_000),
        10,
        "Persistent MQTT sessions (clean session false) one device or user may keep",
    ),
    Setting(
        "mqtt_account_queue_bytes",
        _int_range(65536, 1 << 40),
        64 * 1024 * 1024,
        "Bytes of QoS 1/2 messages waiting for all the MQTT sessions of one device or user",
    ),
    Setting(
        "mqtt_account_retained_bytes",
        _int_range(0, 1 << 40),
        16 * 1024 * 1024,
        "Bytes of retained MQTT messages (topic and payload) one device or user may keep",
    ),
    Setting(
        "mqtt_session_expiry_hours",
        _int_range(1, 87600),
        168,
        "Hours a persistent MQTT session (clean session false) is kept while offline",
    ),
    Setting(
        "files_max_upload_bytes",
        _int_range(1, 5 * GIB),
        5 * GIB,
        "Largest single-part upload or part accepted through a presigned URL, in bytes "
        "(max_body_bytes does not apply to uploads)",
    ),
    Setting(
        "files_min_part_bytes",
        _int_range(1, 5 * GIB),
        5 * MIB,
        "Smallest part of a multipart upload, except its last part, in bytes",
    ),
    Setting("files_max_parts", _int_range(1, 10000), 10000, "Most parts of a multipart upload"),
    Setting(
        "files_group_quota_bytes",
        _optional(_int_range(1, 1 << 60)),
        None,
        "Most bytes of files one group may hold (default: no quota)",
    ),
    Setting(
        "files_quota_bytes",
        _optional(_int_range(1, 1 << 60)),
        None,
        "Most bytes of files the whole installation may hold (default: no quota)",
    ),
    Setting(
        "tunnel_max_bytes_per_second",
        _int_range(0, 1 << 40),
        0,
        "Bytes per second one device tunnel relays, all its streams together (0: no limit)",
    ),
    Setting(
        "tunnel_max_streams",
        _int_range(1, 1000),
        16,
        "Connections (streams) one device tunnel carries at once",
    ),
    Setting(
        "tunnel_idle_timeout",
        _seconds(0.1, 86400),
        900.0,
        "Seconds a tunnel stream may carry no byte either way before it is closed",
    ),
    Setting(
        "tunnel_connect_timeout",
        _seconds(0.1, 300),
        15.0,
        "Seconds a new tunnel stream waits for the device's end to connect",
    ),
    Setting(
        "audit_retention_days",
        _int_range(1, 36500),
        365,
        "Days an audit log event is kept before the hourly sweep deletes it",
    ),
    Setting(
        "backup_keep",
        _int_range(1, 3650),
        7,
        "Backups `edge backup --into FOLDER` keeps there: the oldest beyond this are removed",
    ),
    Setting(
        "metrics",
        _bool,
        True,
        "Serve GET /metrics (Prometheus text) to staff and to metrics_token; false: 404",
    ),
    Setting(
        "metrics_token",
        _optional(_long_secret),
        None,
        "Bearer token a Prometheus scraper sends to GET /metrics (staff tokens work too)",
    ),
    Setting(
        "memory_trace_frames",
        _int_range(0, 100),
        0,
        "Trace Python allocations (this many frames each) for the SIGUSR2 memory report;"
        " 0: off (tracing slows the server)",
    ),
)
BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class Config:
    data_dir: Path
    host: str
    port: int
    public_url: str | None
    log_format: str
    log_level: str
    access_log: bool
    admin_email: str
    admin_password: Secret | None
    max_body_bytes: int
    shutdown_timeout: int
    header_timeout: float
    body_timeout: float
    body_min_rate: int
    send_timeout: float
    keepalive_timeout: float
    max_connections_per_address: int
    trusted_proxies: tuple[str, ...]
    event_loop: str
    security_contact: str | None
    security_expires_days: int
    security_languages: str
    tls_cert: Path | None
    tls_key: Path | None
    tls_local_ca: bool
    tls_hostnames: tuple[str, ...] | None
    hsts_max_age: int
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_security: str = "starttls"
    smtp_username: str | None = None
    smtp_password: Secret | None = None
    mail_from: str = "edge@localhost"
    mail_max_attempts: int = 8
    sms_gateway_url: str | None = None
    sms_gateway_body: str = '{"to": "{to}", "text": "{text}"}'
    sms_gateway_auth_header: Secret | None = None
    mqtt_broker_host: str | None = None
    trash_retention_days: int = 30
    data_max_value_bytes: int = 1024 * 1024
    data_max_bulk_paths: int = 100
    mqtt_port: int = 1883
    mqtt_tls_port: int = 8883
    mqtt_ws_port: int = 8083
    mqtt_wss_port: int = 8084
    mqtt_max_connections: int = 2000
    mqtt_max_message_bytes: int = 256 * 1024
    mqtt_rate_limit: int = 1000
    mqtt_queue_messages: int = 1000
    mqtt_queue_bytes: int = 1024 * 1024
    mqtt_max_subscriptions: int = 500
    mqtt_account_sessions: int = 10
    mqtt_account_queue_bytes: int = 64 * 1024 * 1024
    mqtt_account_retained_bytes: int = 16 * 1024 * 1024
    mqtt_session_expiry_hours: int = 168
    files_max_upload_bytes: int = 5 * GIB
    files_min_part_bytes: int = 5 * MIB
    files_max_parts: int = 10000
    files_group_quota_bytes: int | None = None
    files_quota_bytes: int | None = None
    tunnel_max_bytes_per_second: int = 0
    tunnel_max_streams: int = 16
    tunnel_idle_timeout: float = 900.0
    tunnel_connect_timeout: float = 15.0
    audit_retention_days: int = 365
    backup_keep: int = 7
    metrics: bool = True
    metrics_token: Secret | None = None
    memory_trace_frames: int = 0

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
    return Config(**values)


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
