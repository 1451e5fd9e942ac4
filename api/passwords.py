"""Passwords: change one (signed in, or with a reset token) and ask for a reset.

- PUT  /v2/auth/password         password: an access token and `old_password`, or a reset
                                 token (as the bearer, or the form field `reset_token`)
- POST /v2/auth/forgot-password  public
"""

from __future__ import annotations

from aiohttp import web

from api import bodies
from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import RESET_TOKEN, Route, principal
from api.schemas import STR, obj

SET_PASSWORD_FORM = obj(
    {"new_password": STR, "old_password": STR, "reset_token": STR},
    ("new_password",),
    title="SetPasswordFormParams",
)
FORGOT_PASSWORD_FORM = obj(
    {"client_id": {**STR, "pattern": "\\S"}, "username": STR, "email": STR, "phone_number": STR},
    ("client_id",),
    title="ForgotPasswordFormParams",
)
FORGOT_PASSWORD_FORM["description"] = (
    "client_id names the organization; username, email or phone_number the account"
)


async def set_password(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, SET_PASSWORD_FORM)
    passwords = request.app[SERVICES].passwords
    reset = request.get(RESET_TOKEN)
    if reset is not None:
        await passwords.reset(reset, form["new_password"])
    else:
        await passwords.change(principal(request), form.get("old_password"), form["new_password"])
    return json_response({"message": "Success"}, headers=NO_STORE)


async def forgot_password(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, FORGOT_PASSWORD_FORM)
    message = await request.app[SERVICES].passwords.forgot(form)
    return json_response({"message": message}, headers=NO_STORE)


ROUTES = [
    Route(
        "PUT",
        "/v2/auth/password",
        set_password,
        "password",
        "Set or change the password (signed in with old_password, or with a reset token"
        " as the bearer token or the reset_token field)",
        "auth",
        body=SET_PASSWORD_FORM,
        body_type="form",
    ),
    Route(
        "POST",
        "/v2/auth/forgot-password",
        forgot_password,
        "public",
        "Ask for a password reset; the answer is the same whether or not an account matches",
        "auth",
        body=FORGOT_PASSWORD_FORM,
        body_type="form",
        description="The SDK calls this operation `forgot_password` and `trigger_forgot_password`.",
    ),
]
