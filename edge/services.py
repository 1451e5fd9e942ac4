"""The services an HTTP handler may call, built once by `edge/app.py`."""

from __future__ import annotations

from dataclasses import dataclass

from edge.access.project_access import ProjectAccess
from edge.auth.keys import KeyRing
from edge.auth.mfa import Mfa
from edge.auth.passwords import Passwords
from edge.auth.signin import SignIn
from edge.auth.sms_mfa import SmsMfa
from edge.auth.tokens import Tokens
from edge.config import Config
from edge.delivery.alerts import OperatorAlerts
from edge.delivery.email_templates import EmailTemplates
from edge.delivery.messages import Messages
from edge.delivery.outbox_worker import OutboxWorker
from edge.listing import CursorCodec
from edge.tenancy.account import Account
from edge.tenancy.groups import Groups
from edge.tenancy.my_org import MyOrg
from edge.tenancy.orgs import Orgs
from edge.tenancy.pictures import Pictures
from edge.tenancy.projects import Projects
from edge.tenancy.roles import Roles
from edge.tenancy.users import Users
from storage.database import Database


@dataclass
class Services:
    config: Config
    db: Database
    keys: KeyRing
    cursors: CursorCodec
    tokens: Tokens
    orgs: Orgs
    signin: SignIn
    alerts: OperatorAlerts
    projects: Projects
    project_access: ProjectAccess
    groups: Groups
    roles: Roles
    users: Users
    pictures: Pictures
    account: Account
    my_org: MyOrg
    messages: Messages
    email_templates: EmailTemplates
    outbox_worker: OutboxWorker
    mfa: Mfa
    sms_mfa: SmsMfa
    passwords: Passwords

    @classmethod
    def build(cls, config: Config, db: Database, keys: KeyRing) -> Services:
        cursors = CursorCodec(keys.hmac_secret)
        tokens = Tokens(db, keys)
        orgs = Orgs(db, cursors)
        alerts = OperatorAlerts(db, config.admin_email, config.base_url)
        projects = Projects(db, cursors, orgs)
        signin = SignIn(db, tokens, orgs, projects)
        project_access = ProjectAccess(db, tokens, projects)
        groups = Groups(db, cursors)
        roles = Roles(db, cursors, tokens)
        messages = Messages(db, config.base_url)
        users = Users(db, cursors, orgs, tokens, messages)
        software_mfa = Mfa(db, keys.mfa_secret, orgs, tokens)
        sms_mfa = SmsMfa(db, orgs, messages)
        signin.attach(software_mfa, sms_mfa)
        return cls(
            config,
            db,
            keys,
            cursors,
            tokens,
            orgs,
            signin,
            alerts,
            projects,
            project_access,
            groups,
            roles,
            users,
            Pictures(db, users),
            Account(db),
            MyOrg(db, orgs),
            messages,
            EmailTemplates(db, cursors),
            OutboxWorker(db, config),
            software_mfa,
            sms_mfa,
            Passwords(db, tokens, projects, messages),
        )
