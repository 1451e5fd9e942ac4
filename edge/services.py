"""The services an HTTP handler may call, built once by `edge/app.py`."""

from __future__ import annotations

from dataclasses import dataclass

from edge.alerts import OperatorAlerts
from edge.config import Config
from edge.keys import KeyRing
from edge.listing import CursorCodec
from edge.orgs import Orgs
from edge.signin import SignIn
from edge.tokens import Tokens
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

    @classmethod
    def build(cls, config: Config, db: Database, keys: KeyRing) -> Services:
        cursors = CursorCodec(keys.hmac_secret)
        tokens = Tokens(db, keys)
        orgs = Orgs(db, cursors)
        alerts = OperatorAlerts(db, config.admin_email, config.base_url)
        signin = SignIn(db, tokens, orgs)
        return cls(config, db, keys, cursors, tokens, orgs, signin, alerts)
