"""The harness itself: a fresh site answers health and lets the first staff sign in."""

from tests.conftest import Api


async def test_health_and_staff_sign_in(api: Api, staff_token: str) -> None:
    status, body = await api.call("GET", "/v2/health")
    assert status == 200 and body["status"] == "ok"
    org_id = await api.create_org(staff_token, name="Smoke Org")
    status, body = await api.call("GET", f"/v2/orgs/{org_id}", staff_token)
    assert status == 200 and body["org"]["name"] == "Smoke Org"
