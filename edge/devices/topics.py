"""MQTT topics a device may use: its root scope, its IoT scopes, and how they become topic
filters (docs/devices.md).

- A device's `root_scope` is its organization's ID, or `<org_id>/<project_id>` for a
  device of a project. Every topic it may use lies under it.
- `iot_scopes` maps scopes to rights: `{"/sensors/temp": {"can_publish": true,
  "can_subscribe": false}}`. A scope gets a leading `/` when missing, and stands for the
  topic `<root_scope><scope>` and everything below it: `/sensors` covers
  `<root>/sensors` and `<root>/sensors/#`. The scope `/` covers the whole root.
- Every device may also publish and subscribe under its own `/devices/<device_id>`
  (where, for example, tunnel requests reach it), whatever its IoT scopes say.
  `own_topic` and `device_topic` are the one place that path is spelled: tunnel notices,
  commands and twins each name only their part below it.

A filter a client subscribes to is allowed only when every topic it can match lies inside
an allowed scope: `+` and `#` may appear only below a scope's own levels, so a wildcard
never escapes a scope; `$`-topics (`$SYS`, `$share/...`) are never allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from edge.kernel import fields
from edge.kernel.errors import ValidationError

# How the server publishes to a device's own sessions (the broker's `notify_device`, handed
# in by edge/app.py): (device ID, topic, payload) -> how many of its sessions got it.
Notify = Callable[[str, str, bytes], int]
RIGHTS = ("can_publish", "can_subscribe")
MAX_SCOPES = 100
MAX_SCOPE_LENGTH = 256
_FORBIDDEN = ("+", "#", "\x00")


def root_scope(org_id: str, project_id: str | None) -> str:
    return f"{org_id}/{project_id}" if project_id else org_id


def own_topic(root: str, device_id: str, *below: str) -> str:
    """`<root>/devices/<device_id>` and the levels below it: the device's own namespace
    (embedded_broker/acl.py reserves parts of it for the server or the device)."""
    return "/".join((root, "devices", device_id, *below))


class Placed(Protocol):
    """What a device's topics are spelled from: a `Device`, or the `Placement` of one
    (storage/devices.py) that paths reading only that read."""

    @property
    def id(self) -> str: ...

    @property
    def org_id(self) -> str: ...

    @property
    def project_id(self) -> str | None: ...


def device_topic(device: Placed, *below: str) -> str:
    """`own_topic` of a device as stored."""
    return own_topic(root_scope(device.org_id, device.project_id), device.id, *below)


def normalize_scope(field: str, raw: Any) -> str:
    """A scope with its leading '/', no wildcard, no empty level, no trailing '/'."""
    if not isinstance(raw, str) or not raw.strip():
        raise ValidationError(field, "scopes must be non-empty strings")
    scope = raw.strip()
    scope = scope if scope.startswith("/") else "/" + scope
    if scope != "/":
        scope = scope.rstrip("/")
    if len(scope) > MAX_SCOPE_LENGTH:
        raise ValidationError(field, f"scopes must be at most {MAX_SCOPE_LENGTH} characters")
    if any(mark in scope for mark in _FORBIDDEN) or "//" in scope:
        raise ValidationError(field, f"'{raw}' is not a scope: no wildcards or empty levels")
    return scope


def normalize_scopes(field: str, value: Any) -> dict[str, dict[str, bool]]:
    """`{scope: {can_publish, can_subscribe}}` with every scope normalized and both rights
    spelled out."""
    mapping = fields.mapping(field, value)
    if len(mapping) > MAX_SCOPES:
        raise ValidationError(field, f"must hold at most {MAX_SCOPES} scopes")
    out: dict[str, dict[str, bool]] = {}
    for raw, rights in mapping.items():
        scope = normalize_scope(field, raw)
        if scope in out:
            raise ValidationError(field, f"'{raw}' names the scope '{scope}' twice")
        given = fields.mapping(f"{field}.{scope}", rights)
        unknown = [name for name in given if name not in RIGHTS]
        if unknown:
            raise ValidationError(f"{field}.{scope}.{unknown[0]}", "is not a right")
        out[scope] = {
            name: fields.boolean(f"{field}.{scope}.{name}", given.get(name, False))
            for name in RIGHTS
        }
    return out


@dataclass(frozen=True)
class TopicRights:
    """The topic prefixes (as level lists) a client may publish to and subscribe under."""

    publish: tuple[tuple[str, ...], ...]
    subscribe: tuple[tuple[str, ...], ...]

    def may_publish(self, topic: str) -> bool:
        return _topic_ok(topic) and _covered(_levels(topic), self.publish)

    def may_subscribe(self, topic_filter: str) -> bool:
        return _filter_ok(topic_filter) and _covered(_levels(topic_filter), self.subscribe)


def device_rights(
    root: str, device_id: str, scopes: Mapping[str, Mapping[str, bool]]
) -> TopicRights:
    """What a device may use: its IoT scopes under its root, and its own `/devices/<id>`."""
    own = _levels(own_topic(root, device_id))
    publish = [own] + [_prefix(root, s) for s, r in scopes.items() if r.get("can_publish")]
    subscribe = [own] + [_prefix(root, s) for s, r in scopes.items() if r.get("can_subscribe")]
    return TopicRights(_unique(publish), _unique(subscribe))


def scope_rights(publish: Iterable[str] = (), subscribe: Iterable[str] = ()) -> TopicRights:
    """Rights over whole roots (a user tool's org or project namespace)."""
    return TopicRights(
        _unique(_prefix(root, "/") for root in publish),
        _unique(_prefix(root, "/") for root in subscribe),
    )


def _prefix(root: str, scope: str) -> tuple[str, ...]:
    levels = tuple(root.split("/"))
    return levels if scope == "/" else levels + tuple(scope.strip("/").split("/"))


def _unique(prefixes: Iterable[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    return tuple(dict.fromkeys(prefixes))


def _levels(topic: str) -> tuple[str, ...]:
    return tuple(topic.split("/"))


def _topic_ok(topic: str) -> bool:
    """A topic name to publish to: not empty, no wildcard, not a `$` topic."""
    return bool(topic) and "+" not in topic and "#" not in topic and not topic.startswith("$")


def _filter_ok(topic_filter: str) -> bool:
    """A well-formed filter that is not a `$` topic (`$SYS`, `$share/...`)."""
    if not topic_filter or topic_filter.startswith("$") or "\x00" in topic_filter:
        return False
    levels = topic_filter.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            return False
        if "+" in level and level != "+":
            return False
    return True


def _covered(levels: tuple[str, ...], prefixes: Iterable[tuple[str, ...]]) -> bool:
    """Whether the levels lie under one of the prefixes. The prefix's own levels must
    match literally (a wildcard there could reach a sibling scope); anything may follow,
    wildcards included (`#` also matches the prefix's own topic, which the scope covers)."""
    return any(levels[: len(prefix)] == prefix for prefix in prefixes)
