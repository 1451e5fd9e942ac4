"""The history shown at /v2/changelog: the interface's versions and this server's releases."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Release:
    version: str
    date: str | None
    notes: tuple[str, ...]


INTERFACE_HISTORY: tuple[Release, ...] = (
    Release("2.3.18", None, ("The newest interface version; this server implements it.",)),
    Release(
        "2.2.39",
        None,
        (
            "POST and PUT /v2/account/sms/verification were removed; SMS MFA is "
            "enabled in two phases through PUT /v2/auth/mfa/sms.",
        ),
    ),
    Release("2.2.0", None, ("Roles were added.", "Profile pictures were added.")),
    Release("2.1.9", None, ("List and data limits default to 100 and allow at most 1000.",)),
    Release(
        "2.1.0",
        None,
        (
            "Bulk data field results_by_path was renamed data_by_path.",
            "Index filter operators gt/le were replaced by gte/lte.",
        ),
    ),
    Release("2.0.2", None, ("File redirects answer 308 instead of 302.",)),
    Release("2.0.1", None, ("Schema validation failures answer 406 instead of 422.",)),
)

SERVER_RELEASES: tuple[Release, ...] = (
    Release(
        "0.1.0",
        "2026-11-22",
        (
            "First release: the edge server with its storage core, the interface conventions, "
            "the shared list engine, organizations, staff sign-in, the OpenAPI reference, "
            "the changelog, security.txt and the JWKS.",
        ),
    ),
)
