"""Sign-in: the OAuth 2.0 password and refresh-token grants.

Without a client ID the username is a staff account; with one it is a user of the org
that the client ID (its ID or alias) names. When the client ID names a project, the user
signs in to that project's scope: they need access to it (or to be an org admin), the
project's login fields say what `username` may be, and its token settings apply.
Wrong username and wrong password give the same answer after the same work, so the
response does not tell which accounts exist.
"""

from __future__ import annotations

from typing import Any

from edge import passwords
from edge.errors import Denied, ValidationError
from edge.orgs import Orgs
from edge.principal import Principal
from edge.projects import Projects
from edge.tokens import Lifetimes, Tokens
from storage import staff, users
from storage.database import Database

BAD_CREDENTIALS = "Incorrect username or password"


class SignIn:
    def __init__(self, db: Database, tokens: Tokens, orgs: Orgs, projects: Projects) -> None:
        self._db = db
        self._tokens = tokens
        self._orgs = orgs
        self._projects = projects

    async def password_grant(self, form: dict[str, str]) -> dict[str, Any]:
        login = form.get("username") or form.get("email") or form.get("phone_number") or ""
        password = form.get("password") or ""
        if not login.strip() or not password:
            raise ValidationError(None, "username and password are required")
        client_id = (form.get("client_id") or "").strip()
        if not client_id:
            return await self._staff(login.strip().casefold(), password, form.get("scope"))
        return await self._user(client_id, login.strip().casefold(), password)

    async def refresh_grant(self, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("refresh_token") or ""
        if not token:
            raise ValidationError("refresh_token", "is required")
        return await self._tokens.refresh(token, self._lifetimes_of_session)

    async def _staff(self, login: str, password: str, scope: str | None) -> dict[str, Any]:
        account = self._db.read(lambda c: staff.find_by_login(c, login))
        if not await passwords.verify(_hash_of(account), password):
            raise ValidationError(None, BAD_CREDENTIALS)
        assert account is not None
        org_id = None
        if scope and scope.strip():
            org_id = self._orgs.resolve_client(scope.strip(), field="scope")["id"]
        return await self._tokens.open_session(
            "staff", account["id"], org_id=org_id, project_id=None, lifetimes=Lifetimes()
        )

    async def _user(self, client_id: str, login: str, password: str) -> dict[str, Any]:
        org, project = self._projects.resolve_client(client_id)
        if project is None:
            account = self._db.read(lambda c: users.find_by_login(c, org["id"], login))
        else:
            account = self._projects.find_login(project, login)
        if not await passwords.verify(_hash_of(account), password):
            raise ValidationError(None, BAD_CREDENTIALS)
        assert account is not None
        if not account["is_active"] or not org["is_active"]:
            raise Denied("This account is suspended")
        if project is not None:
            self._projects.admit(project, account["id"])
        return await self._tokens.open_session(
            "user",
            account["id"],
            org_id=org["id"],
            project_id=None if project is None else project["id"],
            lifetimes=self._lifetimes(org, project),
        )

    def _lifetimes(self, org: dict[str, Any], project: dict[str, Any] | None) -> Lifetimes:
        if project is None:
            return self._orgs.lifetimes(org)
        return self._projects.lifetimes(project)

    async def _lifetimes_of_session(self, session: dict[str, Any]) -> Lifetimes:
        """A refresh in project scope needs the project and the account's access to it still."""
        if session["org_id"] is None or session["account_kind"] == "staff":
            return Lifetimes()
        if session["project_id"] is None:
            return self._orgs.lifetimes(self._orgs.get_row(session["org_id"]))
        project = self._projects.session_project(session["project_id"])
        self._projects.admit(project, session["account_id"])
        return self._projects.lifetimes(project)

    async def revoke(self, principal: Principal, refresh_token: str | None) -> None:
        if refresh_token:
            await self._tokens.revoke_refresh(refresh_token, principal)
        elif principal.session_id:
            await self._tokens.revoke_session(principal.session_id)


def _hash_of(account: dict[str, Any] | None) -> str | None:
    return None if account is None else account["password_hash"]
