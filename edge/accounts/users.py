"""The user kind: what users have that devices do not (logins, passwords, phone numbers,
MFA), over the flow all accounts share (edge/accounts/__init__.py)."""

from __future__ import annotations

from storage.records import User


class UserKind:
    name = "user"
    noun = "User"
    admin_acts = False

    def login(self, row: User) -> str:
        return row.username


USER = UserKind()
