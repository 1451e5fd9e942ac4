"""What a tunnel request may ask for: service names and a timeout.

Service names are free-form labels (`SSH`, `HTTP`, `modbus-gw`) that the device's agent maps
to local ports; they are compared without regard to case. The timeout is given in minutes
(CreateTunnelBody and NewTunnelInfo) and shown in seconds in a Tunnel, as the SDK's models
say.
"""

from __future__ import annotations

import re
from typing import Any

from edge.kernel.errors import ValidationError

SERVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
MAX_SERVICES = 16
DEFAULT_MINUTES = 60
MAX_MINUTES = 12 * 60


def services(raw: Any) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise ValidationError("services", "must name at least one service")
    if len(raw) > MAX_SERVICES:
        raise ValidationError("services", f"at most {MAX_SERVICES} services")
    seen: set[str] = set()
    for name in raw:
        if not isinstance(name, str) or not SERVICE.fullmatch(name):
            raise ValidationError(
                "services",
                "each must be 1 to 32 letters, digits, '.', '_' or '-', starting with a"
                " letter or digit",
            )
        if name.casefold() in seen:
            raise ValidationError("services", f"'{name}' is named twice")
        seen.add(name.casefold())
    return list(raw)


def timeout_minutes(raw: Any) -> int:
    if raw is None:
        return DEFAULT_MINUTES
    if isinstance(raw, float) and raw.is_integer():  # JSON does not tell 5.0 from 5
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_MINUTES:
        raise ValidationError(
            "timeout", f"must be a whole number of minutes from 1 to {MAX_MINUTES}"
        )
    return raw


def offers(services_of_tunnel: list[str], wanted: str) -> str | None:
    """The tunnel's own spelling of a service asked for in any case, or None."""
    for name in services_of_tunnel:
        if name.casefold() == wanted.casefold():
            return name
    return None
