"""MFA of the signed-in user (or of a user in a sign-in challenge).

Routes ("challenge": an access token, or a challenge session as bearer):
- GET    /v2/auth/mfa/secret-code  challenge (MFA_SETUP)  a new TOTP secret
- PUT    /v2/auth/mfa/software     challenge (MFA_SETUP)  confirm it with a code
- DELETE /v2/auth/mfa/software     challenge (+recovery)  remove software MFA
- PUT    /v2/auth/mfa/sms          challenge (MFA_SETUP, or an MFA step + recovery code)
- DELETE /v2/auth/mfa/sms          challenge (+recovery)  remove SMS MFA
- PATCH  /v2/auth/mfa/settings     token                  preferred_mfa
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api import bodies
from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import CHALLENGE, Auth, Handler, Route, principal
from api.schemas import STR, Schema, obj
from edge.auth.mfa import User, software_code
from edge.kernel.errors import Denied, Unauthenticated

IDENTITY = ("client_id", "username", "email", "phone_number")
CODE: Schema = {"type": "string", "pattern": "^[0-9]{6}$"}
SOFTWARE_FORM = obj(
    {**{n: STR for n in (*IDENTITY, "set_preferred")}, "mfa_code": CODE},
    title="AddSoftwareMfaFormParams",
)
SMS_FORM = obj(
    {n: STR for n in (*IDENTITY, "verification_code", "set_preferred", "recovery_code")},
    title="AddSmsMfaFormParams",
)
REMOVE_FORM = obj({n: STR for n in (*IDENTITY, "recovery_code")}, title="RemoveMfaFormParams")
SETTINGS_FORM = obj(
    {
        "preferred_mfa": {
            "type": "string",
            "enum": ["SOFTWARE", "SMS", "SOFTWARE_TOKEN_MFA", "SMS_MFA"],
        }
    },
    ("preferred_mfa",),
    title="PatchMfaSettingsFormParams",
)
MFA_STEPS = ("SOFTWARE_TOKEN_MFA", "SMS_MFA", "SELECT_MFA_TYPE")


def _caller(request: web.Request) -> tuple[User, dict[str, Any] | None]:
    """The user, and the challenge when a challenge session is the bearer."""
    mfa = request.app[SERVICES].mfa
    challenge = request.get(CHALLENGE)
    if challenge is not None:
        return mfa.user(challenge["user_id"]), challenge
    who = principal(request)
    if who.kind != "user":
        raise Denied("Only users have MFA")
    return mfa.user(who.account_id), None


def _setup_only(challenge: dict[str, Any] | None) -> None:
    if challenge is not None and challenge["kind"] != "MFA_SETUP":
        raise Unauthenticated("This session cannot set up MFA: restart sign-in")


def _recovered(request: web.Request, user: User, code: str | None) -> bool:
    mfa = request.app[SERVICES].mfa
    return bool(code) and any(
        mfa.recovery_ok(user["id"], k, code or "") for k in ("software", "sms")
    )


async def _form(request: web.Request, schema: dict[str, Any]) -> dict[str, str]:
    return await bodies.read_form(request, schema) if request.body_exists else {}


async def get_secret_code(request: web.Request) -> web.Response:
    user, challenge = _caller(request)
    _setup_only(challenge)
    reply = await request.app[SERVICES].mfa.secret_code(user)
    return json_response(reply, headers=NO_STORE)


async def add_software(request: web.Request) -> web.Response:
    form = await _form(request, SOFTWARE_FORM)
    user, challenge = _caller(request)
    _setup_only(challenge)
    preferred = (form.get("set_preferred") or "").lower() in ("true", "1")
    services = request.app[SERVICES]
    code = software_code(form.get("mfa_code"))
    reply: dict[str, Any] = {
        "message": "Software MFA enabled",
        "recovery_code": await services.mfa.add_software(user, code, preferred),
    }
    if challenge is not None:
        reply["session"] = await services.signin.setup_session(challenge)
    return json_response(reply, headers=NO_STORE)


async def add_sms(request: web.Request) -> web.Response:
    form = await _form(request, SMS_FORM)
    user, challenge = _caller(request)
    if challenge is not None and challenge["kind"] != "MFA_SETUP":
        if challenge["kind"] not in MFA_STEPS or not _recovered(
            request, user, form.get("recovery_code")
        ):
            raise Unauthenticated("This session cannot set up MFA: restart sign-in")
    services = request.app[SERVICES]
    reply = await services.sms_mfa.add(user, form)
    if challenge is not None and "recovery_code" in reply:
        reply["session"] = await services.signin.setup_session(challenge)
    return json_response(reply, headers=NO_STORE)


def _remover(kind: str) -> Handler:
    async def remove(request: web.Request) -> web.Response:
        form = await _form(request, REMOVE_FORM)
        user, challenge = _caller(request)
        code = form.get("recovery_code") or None
        if challenge is not None and (challenge["kind"] not in MFA_STEPS or not code):
            raise Unauthenticated("A sign-in session removes MFA only with a recovery code")
        await request.app[SERVICES].mfa.remove(user, kind, recovery_code=code, by_admin=False)
        return json_response({"message": "Success"})

    return remove


async def patch_settings(request: web.Request) -> web.Response:
    form = await bodies.read_form(request, SETTINGS_FORM)
    user, _ = _caller(request)
    await request.app[SERVICES].mfa.set_preferred(user, form["preferred_mfa"])
    return json_response({"message": "Success"})


def _route(method: str, path: str, handler: Handler, auth: Auth, summary: str, **kw: Any) -> Route:
    return Route(method, path, handler, auth, summary, "auth", body_type="form", **kw)


ROUTES = [
    _route(
        "GET",
        "/v2/auth/mfa/secret-code",
        get_secret_code,
        "challenge",
        "A new software MFA secret",
        responses={200: "MfaSecretCode"},
        operation_id="get_mfa_secret_code",
    ),
    _route(
        "PUT",
        "/v2/auth/mfa/software",
        add_software,
        "challenge",
        "Confirm software MFA with a code",
        body=SOFTWARE_FORM,
        responses={200: "SoftwareMfaAdded"},
        operation_id="add_software_mfa",
        description="The SDK calls this operation `add_software_mfa` and `enable_software_mfa`.",
    ),
    _route(
        "DELETE",
        "/v2/auth/mfa/software",
        _remover("software"),
        "challenge",
        "Remove software MFA",
        body=REMOVE_FORM,
        operation_id="remove_software_mfa",
        description="The SDK calls this operation"
        " `remove_software_mfa` and `disable_software_mfa`.",
    ),
    _route(
        "PUT",
        "/v2/auth/mfa/sms",
        add_sms,
        "challenge",
        "Add SMS MFA (phase 1: phone; phase 2: verification_code)",
        body=SMS_FORM,
        responses={200: "SmsMfaAdded"},
        operation_id="add_sms_mfa",
        description="The SDK calls this operation `add_sms_mfa` and `enable_sms_mfa`.",
    ),
    _route(
        "DELETE",
        "/v2/auth/mfa/sms",
        _remover("sms"),
        "challenge",
        "Remove SMS MFA",
        body=REMOVE_FORM,
        operation_id="remove_sms_mfa",
        description="The SDK calls this operation `remove_sms_mfa` and `disable_sms_mfa`.",
    ),
    _route(
        "PATCH",
        "/v2/auth/mfa/settings",
        patch_settings,
        "token",
        "Set the preferred MFA",
        body=SETTINGS_FORM,
        operation_id="patch_mfa_settings",
    ),
]
