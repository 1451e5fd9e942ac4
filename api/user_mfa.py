"""An admin acting on another user's MFA and account recovery.

Routes (org admins, project admins, and group admins over members of their groups who
are not admins themselves, never over a user who administers a project or group beyond
their reach: edge/accounts/standing.py; others get 403, or 404 when they cannot see the
user):
- DELETE /v2/users/{user_id}/mfa/sms       remove the user's SMS MFA
- DELETE /v2/users/{user_id}/mfa/software  remove the user's software MFA
- POST   /v2/users/{user_id}/recovery      queue an account-recovery mail (`template_id`)
- DELETE /v2/users/{user_id}/sign-in-blocks  lift the user's sign-in blocks (every address)
"""

from __future__ import annotations

from aiohttp import web

from api.keys import SERVICES
from api.responses import json_response
from api.routing import Handler, Route, principal
from edge.auth import mfa


def _remover(kind: str) -> Handler:
    async def remove(request: web.Request) -> web.Response:
        services = request.app[SERVICES]
        target = services.users.target(principal(request), request.match_info["user_id"])
        services.users.require_admin_over(target)
        await services.mfa.remove(target.account, kind, recovery_code=None, by_admin=True)
        return json_response({"message": "Success"})

    return remove


async def send_recovery(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    target = services.users.target(principal(request), request.match_info["user_id"])
    services.users.require_admin_over(target)
    template_id = request.query.get("template_id") or None
    hours = mfa.reset_hours(services.orgs, target.account)
    await mfa.send_recovery(services.db, services.messages, target.account, hours, template_id)
    return json_response({"message": "Success"})


async def clear_sign_in_blocks(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    target = services.users.target(principal(request), request.match_info["user_id"])
    services.users.require_admin_over(target)
    cleared = await services.signin.throttle.clear(f"user:{target.account['id']}")
    return json_response({"message": f"Cleared {cleared} sign-in block(s)"})


ROUTES = [
    Route(
        "DELETE",
        "/v2/users/{user_id}/mfa/sms",
        _remover("sms"),
        "token",
        "Remove a user's SMS MFA (admins)",
        "users",
        operation_id="remove_user_sms_mfa",
        description="The SDK calls this operation"
        " `remove_user_sms_mfa` and `disable_user_sms_mfa`.",
    ),
    Route(
        "DELETE",
        "/v2/users/{user_id}/mfa/software",
        _remover("software"),
        "token",
        "Remove a user's software MFA (admins)",
        "users",
        operation_id="remove_user_software_mfa",
        description="The SDK calls this operation `remove_user_software_mfa` and"
        " `disable_user_software_mfa`.",
    ),
    Route(
        "POST",
        "/v2/users/{user_id}/recovery",
        send_recovery,
        "token",
        "Send a user an account-recovery mail (admins)",
        "users",
        query=("template_id",),
        operation_id="send_recovery_email",
    ),
    Route(
        "DELETE",
        "/v2/users/{user_id}/sign-in-blocks",
        clear_sign_in_blocks,
        "token",
        "Lift a user's sign-in blocks from every address (admins)",
        "users",
        extension=True,
    ),
]
