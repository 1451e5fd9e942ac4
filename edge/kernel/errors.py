"""Domain errors. They carry a public message and, apart from it, a private cause.

No HTTP types here: `api/errors.py` is the one map from these classes to status codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storage import space

# Fields a refusal's Status payload carries beside its `message`, for a program to read
# rather than parse the words (docs/conventions.md names each).
Extension = Mapping[str, Any]


class EdgeError(Exception):
    """Base of every error whose message may be shown to the caller."""

    def __init__(
        self, message: str, *, cause: str | None = None, extension: Extension | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.extension: Extension = extension or {}


class ValidationError(EdgeError):
    """A value breaks a rule (range, format, policy): `<field>: <message>`."""

    def __init__(
        self,
        field: str | None,
        message: str,
        *,
        cause: str | None = None,
        extension: Extension | None = None,
    ) -> None:
        text = f"{field}: {message}" if field else message
        super().__init__(text, cause=cause, extension=extension)
        self.field = field


class SchemaError(EdgeError):
    """The request does not have the declared shape (missing field, wrong type, unknown field)."""


class NotFound(EdgeError):
    pass


class Conflict(EdgeError):
    pass


class AliasTaken(Conflict):
    def __init__(self, alias: str) -> None:
        super().__init__(f"alias: '{alias}' is already taken")


class DeleteProtected(Conflict):
    def __init__(self, kind: str) -> None:
        super().__init__(
            f"{kind} is delete protected: set is_delete_protected to false first, "
            "or pass force=true as an admin"
        )


class Denied(EdgeError):
    """Authenticated, but not permitted."""


class Unauthenticated(EdgeError):
    """No valid credentials, or the session has ended."""


class TooManyAttempts(EdgeError):
    """Too many failed attempts: wait `retry_after` seconds before the next one."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(EdgeError):
    """The service cannot serve this now (shutting down, overloaded)."""


class TooLarge(EdgeError):
    """The request (or a part of it: an upload, a file part) is larger than its documented
    limit, or than a storage quota leaves room for."""


class NoReply(EdgeError):
    """A device did not answer a command in the time the caller gave it."""


class BadReply(EdgeError):
    """A device answered a command with a reply the server cannot take (not the JSON of
    docs/commands.md): its caller is told at once rather than waiting out its timeout."""


class TimedOut(EdgeError):
    """The client did not send its request (its body) within the time allowed."""


class StorageRefused(Exception):
    """The data folder refused a write; nothing was left half-written, and the same write
    succeeds once the disk allows it. Not an EdgeError: its text (the OS's reason) is for
    the log, never the caller. Raised in place of storage's own errors where they leave
    storage (edge/kernel/storage_errors.py); each is also storage's class of the same name."""


class DiskFull(StorageRefused, space.DiskFull):
    """The disk, or the operator's filesystem quota, has no room for the write."""


class NotWritable(StorageRefused, space.NotWritable):
    """The data folder refuses writes: read-only, permissions taken away, I/O errors."""
