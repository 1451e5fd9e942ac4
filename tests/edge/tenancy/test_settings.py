"""edge/tenancy/settings.py: each setting's rule, the first bad one named, and effective
values (a project's own, else its org's, else the default)."""

from __future__ import annotations

import pytest

from edge.kernel.errors import Denied, ValidationError
from edge.kernel.principal import Principal
from edge.tenancy import settings
from tests.edge.rooms import Room


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("mfa_required", "yes"),
        *((name, low - 1) for name, (low, _) in settings.RANGES.items()),
        *((name, high + 1) for name, (_, high) in settings.RANGES.items()),
        ("session_expire_mins", -5),
        ("allowed_login_fields", ["username", "nickname"]),
        ("default_from_address", "not an address"),
        ("custom_settings", ["a list"]),
    ],
)
def test_a_bad_value_is_refused_naming_its_setting(name: str, value: object) -> None:
    with pytest.raises(ValidationError) as refused:
        settings.validated({name: value})
    assert refused.value.field == name


@pytest.mark.parametrize(
    ("name", "value"),
    [
        *((name, low) for name, (low, _) in settings.RANGES.items()),
        *((name, high) for name, (_, high) in settings.RANGES.items()),
        ("allowed_login_fields", ["email"]),
        ("mfa_required", True),
    ],
)
def test_values_at_the_edges_of_their_rule_pass(name: str, value: object) -> None:
    assert settings.validated({name: value}) == {name: value}


def test_a_whole_number_may_be_written_as_a_float() -> None:
    """JSON does not tell 5.0 from 5; stored as an integer."""
    stored = settings.validated({"session_expire_mins": 15.0})["session_expire_mins"]
    assert stored == 15 and isinstance(stored, int)
    with pytest.raises(ValidationError):
        settings.validated({"session_expire_mins": 5.5})


def test_only_the_names_asked_for_are_read_and_the_first_bad_one_is_named() -> None:
    body = {"mfa_required": "no", "session_expire_mins": 99, "unknown": 1}
    assert settings.validated(body, ("pii_admin_only",)) == {}
    with pytest.raises(ValidationError) as refused:
        settings.validated(body, ("session_expire_mins", "mfa_required"))
    assert refused.value.field == "session_expire_mins"


def test_a_locale_is_normalized_before_its_rule() -> None:
    assert settings.validated({"default_locale": "en_gb"})["default_locale"] == "en-GB"


async def test_effective_takes_the_project_then_the_org_then_the_default(room: Room) -> None:
    org_id = await room.org(device_owners_can_tunnel=True)
    admin = await room.admin(org_id)
    inherits = await room.project(admin, "Inherits")
    own = await room.project(admin, "Own", device_owners_can_tunnel=False)
    name = "device_owners_can_tunnel"
    assert settings.effective(room.services.db, org_id, None, name) is True
    assert settings.effective(room.services.db, org_id, inherits, name) is True
    assert settings.effective(room.services.db, org_id, own, name) is False
    many = settings.effective_many(room.services.db, org_id, own, (name, "pii_admin_only"))
    assert many == {name: False, "pii_admin_only": False}
    assert settings.effective(room.services.db, "no-such-org", None, "session_expire_mins") == 5


async def test_role_limit_reads_the_org_or_the_default(room: Room) -> None:
    org_id = await room.org(max_roles_per_user=3)
    other = await room.org("Other")
    db = room.services.db
    assert db.read(lambda c: settings.role_limit(c, org_id)) == 3
    assert db.read(lambda c: settings.role_limit(c, other)) == 20


async def test_a_body_may_name_only_a_project_of_the_callers_org(room: Room) -> None:
    org_id, other_id = await room.org(), await room.org("Other")
    project = await room.project(await room.admin(org_id))
    theirs = await room.project(await room.admin(other_id), "Theirs")
    db = room.services.db
    assert settings.check_project(db, org_id, None) is None
    assert settings.check_project(db, org_id, f" {project} ") == project
    for bad in (theirs, "", 7):
        with pytest.raises(ValidationError):
            settings.check_project(db, org_id, bad)


def test_an_org_is_required() -> None:
    with pytest.raises(Denied):
        settings.require_org(Principal("staff", "s", None))
    assert settings.require_org(Principal("staff", "s", None, "org")) == "org"
