"""Who is calling: the verified identity every service call is checked against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["staff", "user", "device"]


@dataclass(frozen=True)
class Principal:
    kind: Kind
    account_id: str
    session_id: str | None
    org_id: str | None = None
    project_id: str | None = None

    @property
    def is_staff(self) -> bool:
        return self.kind == "staff"

    @property
    def actor(self) -> str:
        """The ID recorded in created_by / last_updated_by."""
        return self.account_id
