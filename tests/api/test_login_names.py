"""One login value names one account: a username shaped like a phone number is refused
(in any formatting), for admins and for users renaming themselves; rows written before the
rule are reported by `edge check`, and keep working."""

from __future__ import annotations

import pytest

from edge.app import Site
from edge.ops import check
from tests.conftest import Api
from tests.tenants import PASSWORD, Tenant


@pytest.mark.parametrize("name", ["+15550100200", "+1 (555) 010-0200", "0044 20 7946 0000"])
async def test_a_username_shaped_like_a_phone_number_is_refused(
    api: Api, tenant: Tenant, name: str
) -> None:
    admin = await tenant.token()
    body = {"username": name, "email": "x@clinic.test", "password": PASSWORD}
    status, reply = await api.call("POST", "/v2/users", admin, json=body)
    assert status == 400 and reply["message"].startswith("username:")


async def test_nobody_can_take_another_users_phone_as_a_username(api: Api, tenant: Tenant) -> None:
    admin = await tenant.token()
    victim = {"email": "v@clinic.test", "phone_number": "+15550100200", "password": PASSWORD}
    assert (await api.call("POST", "/v2/users", admin, json=victim))[0] == 201
    body = {"email": "a@clinic.test", "username": "attacker", "password": PASSWORD}
    status, reply = await api.call("POST", "/v2/users", admin, json=body)
    attacker = await tenant.token("a@clinic.test")
    change = {"username": "+1 555 010 0200"}
    status, reply = await api.call(
        "PATCH", f"/v2/users/{reply['user']['id']}", attacker, json=change
    )
    assert status == 400 and "phone" in reply["message"]


def test_edge_check_reports_logins_written_before_the_rule(site: Site, tenant: Tenant) -> None:
    def legacy(conn: object) -> None:
        conn.execute(  # type: ignore[attr-defined]
            "UPDATE users SET username = '+15550100200', username_folded = '+15550100200'"
            " WHERE id = ?",
            (tenant.admin_id,),
        )

    site.services.db.write_sync(legacy)
    lines: list[str] = []
    check.run(site.services.config.data_dir, lines.append)
    assert any("logins" in line and "phone number" in line for line in lines), lines
