"""Sign-in: the OAuth 2.0 password and refresh-token grants.

Without a client ID the username is a staff account; with one it is a user of the org
that the client ID (its ID or alias) names. When the client ID names a project, the user
signs in to that project's scope: they need access to it (or to be an org admin), the
project's login fields say what `username` may be, and its token settings apply.
Wrong username and wrong password give the same answer after the same work, so the
response does not tell which accounts exist.

A user's sign-in is a small state machine: after the password, the next step may be a
Challenge (a new password, an MFA code, MFA setup, a choice of MFA method) answered on
`POST /v2/auth/challenge` with the challenge session as bearer; see docs/sign-in.md.
Failed attempts are throttled per (account, client address) pair, per account at a much
higher rate, and per address (edge/auth/throttle.py).
"""

from __future__ import annotations

from typing import Any

from edge.auth import hashing, mfa
from edge.auth.challenges import Challenges
from edge.auth.mfa import Mfa
from edge.auth.sms_mfa import SmsMfa
from edge.auth.throttle import Throttle, second_factor
from edge.auth.tokens import Lifetimes, Tokens, lifetimes_of
from edge.kernel import audit, clock, fields
from edge.kernel.errors import Denied, Unauthenticated, ValidationError
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tenancy.orgs import Orgs
from edge.tenancy.projects import Projects, settings_of
from storage import credentials, staff, users
from storage.database import Database
from storage.records import AuditEvent, Org, Project, User
from storage.rows import Row

BAD_CREDENTIALS = "Incorrect username or password"
WRONG_CODE = "Incorrect MFA code: restart sign-in"
MFA_FIRST = "Your organization requires MFA: sign in with your username and password to set it up"


class SignIn:
    def __init__(self, db: Database, tokens: Tokens, orgs: Orgs, projects: Projects) -> None:
        self._db = db
        self._tokens = tokens
        self._orgs = orgs
        self._projects = projects
        self.throttle = Throttle(db)
        self.challenges = Challenges(db)

    def attach(self, software: Mfa, sms: SmsMfa) -> None:
        """The MFA services (built after this one) that the challenge steps use."""
        self._mfa = software
        self._sms = sms

    async def password_grant(
        self, form: dict[str, str], address: str | None = None
    ) -> dict[str, Any]:
        login = form.get("username") or form.get("email") or form.get("phone_number") or ""
        password = form.get("password") or ""
        if not login.strip() or not password:
            raise ValidationError(None, "username and password are required")
        client_id = (form.get("client_id") or "").strip()
        if not client_id:
            return await self._staff(login.strip().casefold(), password, form.get("scope"), address)
        user_info = await self._user(client_id, login.strip().casefold(), password, address)
        if user_info.get("challenge") == "SOFTWARE_TOKEN_MFA" and form.get("mfa_code"):
            return await self._one_step(user_info, form, address)
        return user_info

    async def _one_step(
        self, challenge: dict[str, Any], form: dict[str, str], address: str | None
    ) -> dict[str, Any]:
        """`mfa_code` sent with the password (LoginFormParams allows it): answer at once."""
        answer = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": form["mfa_code"]}
        row = self.challenges.require(str(challenge["session"]))
        return await self.answer(row, answer, address)

    async def refresh_grant(self, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("refresh_token") or ""
        if not token:
            raise ValidationError("refresh_token", "is required")
        return await self._tokens.refresh(token, self._lifetimes_of_session)

    async def _staff(
        self, login: str, password: str, scope: str | None, address: str | None
    ) -> dict[str, Any]:
        account = self._db.read(lambda c: staff.find_by_login(c, login))
        key = f"staff:{account['id']}" if account else f"login:staff:{login}"
        await self._password(key, account, password, address, _failed(None, "staff", account))
        assert account is not None
        org_id = None
        if scope and scope.strip():
            org_id = self._orgs.resolve_client(scope.strip(), field="scope")["id"]
        who = Principal("staff", account["id"], None, org_id)
        return await self._tokens.open_session(
            "staff",
            account["id"],
            org_id=org_id,
            project_id=None,
            lifetimes=Lifetimes(),
            events=(audit.event("sign_in", who, target=("staff", who.account_id)),),
        )

    async def _password(
        self,
        key: str,
        account: User | Row | None,
        password: str,
        address: str | None,
        failed: AuditEvent,
    ) -> None:
        """Check a password under the throttle; the answer is the same for unknown accounts.

        `key` names the resolved account (or, when the login names none, the normalized
        login), so every spelling of one login counts against the same account."""
        self.throttle.check(key, address)
        if not await hashing.verify(_hash_of(account), password):
            await self.throttle.failed(key, address, failed)
            raise ValidationError(None, BAD_CREDENTIALS)
        await self.throttle.succeeded(key, address)

    async def _user(
        self, client_id: str, login: str, password: str, address: str | None
    ) -> dict[str, Any]:
        org, project = self._projects.resolve_client(client_id)
        account = self._projects.find_login(org, project, login)
        key = f"user:{account['id']}" if account else f"login:{org['id']}:{fields.login_key(login)}"
        await self._password(key, account, password, address, _failed(org["id"], "user", account))
        assert account is not None
        if not account["is_active"] or not org["is_active"]:
            raise Denied("This account is suspended")
        if project is not None:
            self._projects.admit(project, account["id"])
        return await self._next_step(account, org, project, after_password=True)

    # -- the state machine ---------------------------------------------------------------
    async def _next_step(
        self, user: User, org: Org, project: Project | None, *, after_password: bool
    ) -> dict[str, Any]:
        """A Challenge for the next step, or TokenInfo when none is left."""
        project_id = None if project is None else project["id"]
        step = _step(user, mfa.mfa_required(self._orgs, org["id"]), after_password)
        if step is None:
            return await self._open(user, org, project)
        extra: dict[str, Any] = {}
        if step == "SMS_MFA":
            extra["code_hash"] = await self._sms.send_sign_in_code(user)
        return await self.challenges.issue(step, user, org, project_id, **extra)

    async def answer(self, row: Row, form: dict[str, str], address: str | None) -> dict[str, Any]:
        """Answer a challenge: `row` is the live challenge of the session the client sent
        (the route guard found it); the answer must be for its kind."""
        kind = (form.get("challenge") or "").strip().upper()
        if kind != row["kind"]:
            raise ValidationError("challenge", f"this session answers {row['kind']}")
        key = second_factor(f"user:{row['user_id']}")
        self.throttle.check(key, address)
        user = self._user_row(row["user_id"])
        org = self._orgs.get_row(row["org_id"])
        project = None
        if row["project_id"]:
            project = self._projects.session_project(row["project_id"])
            self._projects.admit(project, user["id"])
        handler = {
            "NEW_PASSWORD_REQUIRED": self._new_password,
            "SOFTWARE_TOKEN_MFA": self._software_code,
            "SMS_MFA": self._sms_code,
            "SELECT_MFA_TYPE": self._select,
            "MFA_SETUP": self._setup_done,
        }[row["kind"]]
        return await handler(row, user, org, project, form, address)

    async def _new_password(
        self, row: Row, user: User, org: Org, project: Project | None, form: dict[str, str], _: Any
    ) -> dict[str, Any]:
        new = form.get("new_password") or ""
        hashing.check_policy(
            new, username=user["username"], email=user["email"], field="new_password"
        )
        await self.challenges.use(row)
        digest = await hashing.hash(new)
        now = clock.now_iso()
        who = Principal("user", user["id"], None, org["id"])
        details = {"reason": "new_password_required"}
        changed = audit.event(
            "password_changed", who, target=("user", who.account_id), details=details
        )
        await self._db.write(
            audit.along(lambda c: credentials.set_password(c, user["id"], digest, now), changed)
        )
        return await self._next_step(self._user_row(user["id"]), org, project, after_password=False)

    async def _software_code(
        self, row: Row, user: User, org: Org, project: Project | None, form: dict[str, str], ip: Any
    ) -> dict[str, Any]:
        code = mfa.software_code(form.get("mfa_code"))
        await self.challenges.use(row)
        await self._code_checked(row, await self._mfa.verify_software(user["id"], code), ip)
        return await self._open(user, org, project)

    async def _sms_code(
        self, row: Row, user: User, org: Org, project: Project | None, form: dict[str, str], ip: Any
    ) -> dict[str, Any]:
        code = (form.get("mfa_code") or "").strip()
        if not code:
            raise ValidationError("mfa_code", "is required")
        await self.challenges.use(row)
        await self._code_checked(row, mfa.same(row["code_hash"], code), ip)
        return await self._open(user, org, project)

    async def _code_checked(self, row: Row, ok: bool, address: str | None) -> None:
        """A wrong code has already spent the session: the client must restart sign-in."""
        key = second_factor(f"user:{row['user_id']}")
        if not ok:
            target = ("user", row["user_id"])
            details = {"factor": "mfa"}
            failed = audit.event(
                "sign_in_failed", None, org_id=row["org_id"], target=target, details=details
            )
            await self.throttle.failed(key, address, failed)
            raise Unauthenticated(WRONG_CODE)
        await self.throttle.succeeded(key, address)

    async def _select(
        self, row: Row, user: User, org: Org, project: Project | None, form: dict[str, str], _: Any
    ) -> dict[str, Any]:
        choice = (form.get("mfa_choice") or "").strip().lower()
        if choice not in ("software", "sms"):
            raise ValidationError("mfa_choice", "must be software or sms")
        await self.challenges.use(row)
        project_id = None if project is None else project["id"]
        if choice == "software":
            return await self.challenges.issue("SOFTWARE_TOKEN_MFA", user, org, project_id)
        code_hash = await self._sms.send_sign_in_code(user)
        return await self.challenges.issue("SMS_MFA", user, org, project_id, code_hash=code_hash)

    async def _setup_done(
        self, row: Row, user: User, org: Org, project: Project | None, form: dict[str, str], _: Any
    ) -> dict[str, Any]:
        if not (user["software_mfa_enabled"] or user["sms_mfa_enabled"]):
            raise ValidationError(
                None, "Set up MFA first (PUT /v2/auth/mfa/software or /v2/auth/mfa/sms)"
            )
        await self.challenges.use(row)
        return await self._open(user, org, project)

    async def setup_session(self, row: Row) -> str:
        """After MFA was set up with a challenge session: spend it, issue the one that ends
        sign-in (answer MFA_SETUP with it)."""
        await self.challenges.use(row)
        user = self._user_row(row["user_id"])
        org = self._orgs.get_row(row["org_id"])
        issued = await self.challenges.issue("MFA_SETUP", user, org, row["project_id"])
        return str(issued["session"])

    def _user_row(self, user_id: str) -> User:
        user = self._db.read(lambda c: users.get(c, user_id))
        if user is None or not user["is_active"]:
            raise Unauthenticated("Account is not active: restart sign-in")
        return user

    async def _open(self, account: User, org: Org, project: Project | None) -> dict[str, Any]:
        project_id = None if project is None else project["id"]
        who = Principal("user", account["id"], None, org["id"], project_id)
        details = {"project_id": project_id} if project_id else {}
        signed_in = audit.event("sign_in", who, target=("user", who.account_id), details=details)
        return await self._tokens.open_session(
            "user",
            account["id"],
            org_id=org["id"],
            project_id=project_id,
            lifetimes=self._lifetimes(org, project),
            events=(signed_in,),
        )

    def _lifetimes(self, org: Org, project: Project | None) -> Lifetimes:
        if project is None:
            return lifetimes_of(settings.of_org(org))
        return lifetimes_of(settings_of(project))

    async def _lifetimes_of_session(self, session: dict[str, Any]) -> Lifetimes:
        """A refresh in project scope needs the project and the account's access to it still."""
        if session["org_id"] is None or session["account_kind"] == "staff":
            return Lifetimes()
        self._require_mfa_set_up(session)
        if session["project_id"] is None:
            return lifetimes_of(settings.of_org(self._orgs.get_row(session["org_id"])))
        project = self._projects.session_project(session["project_id"])
        self._projects.admit(project, session["account_id"])
        return lifetimes_of(settings_of(project))

    def _require_mfa_set_up(self, session: dict[str, Any]) -> None:
        if session["account_kind"] != "user" or not mfa.mfa_required(self._orgs, session["org_id"]):
            return
        user = self._db.read(lambda c: users.get(c, session["account_id"]))
        if user is not None and not (user["software_mfa_enabled"] or user["sms_mfa_enabled"]):
            raise ValidationError(None, MFA_FIRST)

    async def revoke(self, principal: Principal, refresh_token: str | None) -> None:
        if refresh_token:
            await self._tokens.revoke_refresh(refresh_token, principal)
        elif principal.session_id:
            await self._tokens.revoke_session(principal.session_id)


def _step(user: User, required: bool, after_password: bool) -> str | None:
    """The next challenge for a user whose password was just accepted (or set)."""
    if after_password and (user["has_temporary_password"] or user["new_password_required"]):
        return "NEW_PASSWORD_REQUIRED"
    software, sms = bool(user["software_mfa_enabled"]), bool(user["sms_mfa_enabled"])
    preferred = user["preferred_mfa"]
    if software and sms and preferred not in (mfa.SOFTWARE, mfa.SMS):
        return "SELECT_MFA_TYPE"
    if software and (preferred == mfa.SOFTWARE or not sms):
        return "SOFTWARE_TOKEN_MFA"
    if sms:
        return "SMS_MFA"
    return "MFA_SETUP" if required else None


def _failed(org_id: str | None, kind: str, account: User | Row | None) -> AuditEvent:
    """A wrong password, against the account it named (none: the login named no account;
    the login itself is not kept, as a password typed into it would be)."""
    target = (kind, account["id"]) if account is not None else None
    details = {"factor": "password"}
    return audit.event("sign_in_failed", None, org_id=org_id, target=target, details=details)


def _hash_of(account: User | Row | None) -> str | None:
    return None if account is None else account["password_hash"]
