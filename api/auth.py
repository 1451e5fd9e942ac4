"""Sign-in, challenge answers and sign-out.

- POST /v2/auth/token (public): password or refresh grant; 201 TokenInfo or 200 Challenge.
- POST /v2/auth/challenge (session: the bearer is the challenge session): answer a Challenge.
- PUT /v2/auth/token/revoke (token): sign out.
"""

from __future__ import annotations

from aiohttp import web

from api import bodies
from api.client_address import client_address
from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import CHALLENGE, Route, principal
from api.schemas import STR, obj
from edge.kernel.errors import ValidationError

_LOGINS = ("username", "email", "phone_number")
LOGIN_FORM = {
    **obj(
        {
            "grant_type": {"type": "string", "enum": ["password", "refresh_token"]},
            **{
                name: STR
                for name in (
                    "client_id",
                    *_LOGINS,
                    "refresh_token",
                    "scope",
                    "password",
                    "mfa_code",
                )
            },
        },
        ("grant_type",),
        title="LoginFormParams",
    ),
    # A password grant names the account (username, email or phone_number) and its
    # password; a refresh grant its token.
    "if": {"properties": {"grant_type": {"const": "password"}}},
    "then": {"required": ["password"], "properties": {"password": {"minLength": 1}}},
    "else": {"required": ["refresh_token"]},
}
CHALLENGE_FORM = obj(
    {
        name: STR
        for name in (
            "client_id",
            "challenge",
            "username",
            "email",
            "phone_number",
            "scope",
            "mfa_choice",
            "mfa_code",
            "new_password",
        )
    },
    ("challenge",),
    title="RespondToChallengeFormParams",
)
LOGOUT_FORM = obj({"refresh_token": STR}, title="LogoutFormParams")


async def login(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, LOGIN_FORM)
    signin = request.app[SERVICES].signin
    grant = form["grant_type"].strip()
    if grant == "password":
        info = await signin.password_grant(form, client_address(request))
    elif grant == "refresh_token":
        info = await signin.refresh_grant(form)
    else:
        raise ValidationError("grant_type", "must be password or refresh_token")
    return _signed_in_or_challenged(info)


def _signed_in_or_challenged(info: dict[str, object]) -> web.Response:
    status = 200 if "challenge" in info else 201
    return json_response(info, status=status, headers=NO_STORE)


async def respond_to_challenge(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, CHALLENGE_FORM)
    signin = request.app[SERVICES].signin
    answered = await signin.answer(request[CHALLENGE], form, client_address(request))
    return _signed_in_or_challenged(answered)


async def logout(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, LOGOUT_FORM) if request.body_exists else {}
    await request.app[SERVICES].signin.revoke(principal(request), form.get("refresh_token"))
    return json_response({"message": "Success"})


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
        operation_id="login",
        errors=(401, 403, 429),
    ),
    Route(
        "POST",
        "/v2/auth/challenge",
        respond_to_challenge,
        "session",
        "Answer a sign-in challenge (bearer: the challenge session)",
        "auth",
        body=CHALLENGE_FORM,
        body_type="form",
        responses={201: "TokenInfo", 200: "Challenge"},
        operation_id="respond_to_challenge",
        errors=(403, 429),
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
        operation_id="logout",
    ),
]
