"""Who is calling: the verified identity every service call is checked against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "operator": the person at the server's own shell (`edge admin ...`). No account of its own
# and no token: it acts with staff's powers, and the audit log names it `operator`.
Kind = Literal["staff", "user", "device", "operator"]


@dataclass(frozen=True)
class Principal:
    kind: Kind
    account_id: str
    session_id: str | None
    org_id: str | None = None
    project_id: str | None = None

    @property
    def is_staff(self) -> bool:
        """Staff, or the operator, who may do whatever staff may."""
        return self.kind in ("staff", "operator")

    @property
    def actor(self) -> str:
        """The ID recorded in created_by / last_updated_by."""
        return self.account_id
