"""The device registry as the MQTT broker sees it: the SQLite-backed `ClientDirectory`
(edge/devices/mqtt_clients.py).

- Devices connect with their API key (username = device ID) or the client certificate the
  site CA issued them; either way they get the topic rights of their root scope and IoT
  scopes (edge/devices/topics.py).
- User tools connect with a user's access token as the password. Their rights follow the
  user's `device_permissions`: read on the org level gives subscribe rights on the whole
  org root, update gives publish rights there; the same permissions at project level (or
  project admin status) give the project's root. A project-scoped token reaches only its
  project's root. A user with none of these is refused.
- `still_allowed` re-reads a connected client's standing: a reset key or certificate, a
  suspended, moved or deleted device, changed scopes or permissions, an ended session.
  The broker asks it whenever `epoch()` moves, which is the sum of the auth epoch
  (credentials, device state and scopes, sessions) and the access epoch (permissions):
  both only grow, so the sum moves whenever either does.
"""

from __future__ import annotations

from typing import cast

from edge.access.engine import Permissions
from edge.auth.tokens import Tokens
from edge.devices.auth_failures import AuthFailures
from edge.devices.certificate_logins import CertificateLogins
from edge.devices.keys import DeviceKeys
from edge.devices.last_seen import LastSeen
from edge.devices.mqtt_clients import Credential, MqttClient
from edge.devices.topics import TopicRights, device_rights, root_scope, scope_rights
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from edge.kernel.principal import Principal
from storage import access as access_store
from storage import credentials as auth_store
from storage import devices as store
from storage import sessions
from storage import users as user_store
from storage.database import Database
from storage.records import Device

RESOURCE = "device"


class DeviceDirectory:
    def __init__(
        self,
        db: Database,
        keys: DeviceKeys,
        logins: CertificateLogins,
        tokens: Tokens,
        permissions: Permissions,
        last_seen: LastSeen,
    ) -> None:
        self._db = db
        self._keys = keys
        self._logins = logins
        self._tokens = tokens
        self._permissions = permissions
        self._last_seen = last_seen
        self._failures = AuthFailures(db)

    # -- connecting ------------------------------------------------------------------------
    def by_api_key(self, device_id: str, api_key: str) -> MqttClient | None:
        device = self._keys.find(api_key)
        if device is None or device.id != device_id or not device.is_active:
            return None
        return _device_client(device, "api_key", device.api_key_hash or "")

    def by_certificate(self, certificate_der: bytes) -> MqttClient | None:
        found = self._logins.accepted(certificate_der)
        if found is None:
            return None
        return _device_client(found.device, "certificate", found.serial)

    def by_access_token(self, token: str) -> MqttClient | None:
        try:
            principal = self._tokens.verify(token)
        except Unauthenticated:
            return None
        if principal.kind != "user" or principal.org_id is None:
            return None
        found = self._user_rights(principal)
        if found is None:
            return None
        root, rights = found
        stamp = principal.session_id or ""
        user = self._db.read(lambda c: user_store.get(c, principal.account_id))
        name = user.username if user is not None else ""
        return MqttClient(
            "user", principal.account_id, principal.org_id, root, rights, "token", stamp, name
        )

    # -- staying connected -----------------------------------------------------------------
    def still_allowed(self, client: MqttClient) -> bool:
        if client.kind == "device":
            return self._device_still_allowed(client)
        return self._user_still_allowed(client)

    def resume(self, kind: str, account_id: str, credential: str, stamp: str) -> MqttClient | None:
        if kind == "device" and credential in ("api_key", "certificate"):
            device = self._device_of(account_id, cast(Credential, credential), stamp)
            if device is None:
                return None
            return _device_client(device, cast(Credential, credential), stamp)
        if kind == "user" and credential == "token":
            return self._user_client(account_id, stamp)
        return None

    def epoch(self) -> int:
        return self._db.read(lambda c: auth_store.auth_epoch(c) + access_store.epoch(c))

    def seen(self, account_id: str) -> None:
        self._last_seen.seen(account_id)

    def refused(self, address: str, username: str | None) -> None:
        self._failures.failed(address, username)

    # -- devices ---------------------------------------------------------------------------
    def _device_of(self, account_id: str, credential: Credential, stamp: str) -> Device | None:
        """The device, if the credential (by its stamp) is still its current one and the
        device is active."""
        if credential == "certificate":
            device = self._logins.in_force(stamp)
        else:
            device = self._db.read(lambda c: store.get(c, account_id))
            if device is not None and device.api_key_hash != stamp:
                device = None
        if device is None or not device.is_active or device.id != account_id:
            return None
        return device

    def _device_still_allowed(self, client: MqttClient) -> bool:
        device = self._device_of(client.account_id, client.credential, client.stamp)
        if device is None:
            return False
        current = _device_client(device, client.credential, client.stamp)
        return (current.org_id, current.root_scope, current.rights) == (
            client.org_id,
            client.root_scope,
            client.rights,
        )

    # -- user tools ------------------------------------------------------------------------
    def _user_rights(self, principal: Principal) -> tuple[str, TopicRights] | None:
        """The roots a user may subscribe and publish under, from their device permissions."""
        caller = self._permissions.caller(principal)
        org_id = principal.org_id or ""
        if principal.project_id:
            root = root_scope(org_id, principal.project_id)
            roots = {
                action: [root]
                if caller.may(RESOURCE, action, project_id=principal.project_id)
                else []
                for action in ("read", "update")
            }
        else:
            root = root_scope(org_id, None)
            roots = {action: self._org_roots(principal, action) for action in ("read", "update")}
        if not roots["read"] and not roots["update"]:
            return None
        return root, scope_rights(publish=roots["update"], subscribe=roots["read"])

    def _org_roots(self, principal: Principal, action: str) -> list[str]:
        caller = self._permissions.caller(principal)
        org_id = principal.org_id or ""
        if caller.org.allows(RESOURCE, action):
            return [root_scope(org_id, None)]
        grantees = caller.grantees
        projects = self._db.read(
            lambda c: access_store.projects_allowing(c, grantees, RESOURCE, action)
        )
        return [root_scope(org_id, p) for p in sorted(projects)]

    def _user_still_allowed(self, client: MqttClient) -> bool:
        current = self._user_client(client.account_id, client.stamp)
        return current is not None and (current.root_scope, current.rights) == (
            client.root_scope,
            client.rights,
        )

    def _user_client(self, account_id: str, session_id: str) -> MqttClient | None:
        """A user tool's client from its session, if the session is still open and the
        user active and allowed some topics."""
        session = self._db.read(lambda c: sessions.get(c, session_id))
        if session is None or session["revoked"] or session["account_id"] != account_id:
            return None
        if session["refresh_expires_at"] <= clock.now_iso():
            return None
        user = self._db.read(lambda c: user_store.get(c, account_id))
        if user is None or not user.is_active or user.org_id is None:
            return None
        principal = Principal("user", user.id, session["id"], user.org_id, session["project_id"])
        found = self._user_rights(principal)
        if found is None:
            return None
        root, rights = found
        return MqttClient(
            "user", user.id, user.org_id, root, rights, "token", session_id, user.username
        )


def _device_client(device: Device, credential: Credential, stamp: str) -> MqttClient:
    root = root_scope(device.org_id, device.project_id)
    rights = device_rights(root, device.id, device.iot_scopes)
    return MqttClient(
        "device", device.id, device.org_id, root, rights, credential, stamp, device.name
    )
