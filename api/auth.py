"""Sign-in and sign-out (the authentication issue adds challenges, MFA and passwords)."""

from __future__ import annotations

from aiohttp import web

from api import bodies
from api.keys import SERVICES
from api.routing import Route, principal
from api.schemas import STR, obj
from edge.errors import ValidationError

LOGIN_FORM = obj(
    {
        name: STR
        for name in (
            "grant_type",
            "client_id",
            "username",
            "email",
            "phone_number",
            "refresh_token",
            "scope",
            "password",
            "mfa_code",
        )
    },
    ("grant_type",),
    title="LoginFormParams",
)
LOGOUT_FORM = obj({"refresh_token": STR}, title="LogoutFormParams")


async def login(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, LOGIN_FORM)
    signin = request.app[SERVICES].signin
    grant = form["grant_type"].strip()
    if grant == "password":
        info = await signin.password_grant(form)
    elif grant == "refresh_token":
        info = await signin.refresh_grant(form)
    else:
        raise ValidationError("grant_type", "must be password or refresh_token")
    return web.json_response(info, status=201, headers={"Cache-Control": "no-store"})


async def logout(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, LOGOUT_FORM) if request.body_exists else {}
    await request.app[SERVICES].signin.revoke(principal(request), form.get("refresh_token"))
    return web.json_response({"message": "Success"})


ROUTES = [
    Route(
        "POST",
        "/v2/auth/token",
        login,
        "public",
        "Sign in, or refresh an access token",
        "auth",
        body=LOGIN_FORM,
        body_type="form",
        responses={201: "TokenInfo", 200: "Challenge"},
    ),
    Route(
        "PUT",
        "/v2/auth/token/revoke",
        logout,
        "token",
        "Sign out (revoke a session)",
        "auth",
        body=LOGOUT_FORM,
        body_type="form",
    ),
]
