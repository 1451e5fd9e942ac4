"""Tunnels of a device: open, list, get, close (docs/tunnels.md).

Who may: opening (and closing) needs to be an admin of the device (org admin, admin of its
home project or of a group it belongs to, or its owner when
`device_owners_have_admin_access` says so), or its owner when `device_owners_can_tunnel`
allows it (the project's setting over its org's). Reading its tunnels is also for its owner
and for the device itself, which may close them too. A device the caller cannot see is a
404; one it sees but may not tunnel to, a 403.

Opening writes the tunnel with the SHA-256 of the client token, queues the mail to
`sendto_user_id` (the only plaintext copy of the client token, removed from the outbox once
delivered), tells the device over MQTT, and logs who opened it. The notice names the tunnel
and no token (one queued for an offline agent is stored with its session, so a backup would
hold it): the device asks for its end's token itself, with its own credentials
(`device_token`), and each ask replaces the one before. Closing marks it closed and drops
both ends in the relay at once.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from edge.accounts.devices import Devices
from edge.accounts.service import Target
from edge.delivery.messages import Messages
from edge.devices.presence import CLEAN, LOST, Presence
from edge.devices.topics import Notify
from edge.kernel import audit, clock
from edge.kernel.errors import Conflict, Denied, NotFound, Unauthenticated, ValidationError
from edge.kernel.ids import new_id
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tunnels import notices, rules, tokens, views
from edge.tunnels.relay import Hub
from edge.tunnels.tokens import End
from storage import tunnels as store
from storage.database import Database
from storage.records import AuditEvent, Device, Tunnel
from storage.rows import Tx

log = logging.getLogger("edge.tunnels")
Row = dict[str, Any]
OWNERS_CAN_TUNNEL = "device_owners_can_tunnel"
INVALID = "Invalid tunnel token"


@dataclass(frozen=True)
class Standing:
    read: bool
    manage: bool  # open and close


class AgentPresence:
    """One connection of a tunnel agent, as presence counts it."""

    def __init__(self, presence: Presence, device_id: str, org_id: str) -> None:
        self._presence, self._device_id, self._org_id = presence, device_id, org_id
        presence.opened(device_id, org_id)

    def close(self, clean: bool) -> None:
        self._presence.closed(self._device_id, self._org_id, CLEAN if clean else LOST)


class Tunnels:
    def __init__(
        self, db: Database, devices: Devices, messages: Messages, hub: Hub, base_url: str
    ) -> None:
        self._db = db
        self._devices = devices
        self._messages = messages
        self.hub = hub
        self._base_url = base_url
        # How notices reach a device; set by edge/app.py (the broker is not an edge service).
        self.notify: Notify | None = None

    # -- who may -------------------------------------------------------------------------
    def _target(self, principal: Principal, device_id: str, need: str) -> Target[Device]:
        target = self._devices.target(principal, device_id)
        standing = self._standing(target)
        if not getattr(standing, need):
            if not target.rel.read:
                raise NotFound("Device not found")
            raise Denied(
                f"Not permitted to {'open or close' if need == 'manage' else 'read'}"
                " tunnels of this device"
            )
        return target

    def _standing(self, target: Target[Device]) -> Standing:
        rel, device = target.rel, target.account
        owner_may = rel.is_owner and bool(
            settings.effective(self._db, device.org_id, device.project_id, OWNERS_CAN_TUNNEL)
        )
        opener = rel.admin or owner_may
        return Standing(read=opener or rel.is_owner or rel.is_self, manage=opener or rel.is_self)

    def agent_online(self, tunnel: Tunnel) -> AgentPresence:
        """The device counts as online while its tunnel agent is connected
        (docs/presence.md); `close` the returned handle when the agent goes."""
        return AgentPresence(self._devices.presence, tunnel.device_id, tunnel.org_id)

    # -- the five operations -------------------------------------------------------------
    async def open(self, principal: Principal, device_id: str, body: dict[str, Any]) -> Row:
        target = self._target(principal, device_id, "manage")
        device = target.account
        if target.rel.is_self and not target.rel.admin:
            raise Denied("A device may not open tunnels to itself")
        if not device.is_active:
            raise Conflict("Device is not active: reactivate it before opening a tunnel")
        services = rules.services(body.get("services"))
        minutes = rules.timeout_minutes(body.get("timeout"))
        to = self._recipient(device, body.get("sendto_user_id"))
        client_token, client_hash = tokens.new_token("client")
        _, device_hash = tokens.new_token("device")  # told to no one: the device asks for one
        now = clock.now()
        tunnel = Tunnel(
            id=str(uuid.uuid4()),
            org_id=device.org_id,
            device_id=device.id,
            services=services,
            timeout_seconds=minutes * 60,
            client_token_hash=client_hash,
            device_token_hash=device_hash,
            sent_to=to,
            opened_date=clock.iso(now),
            opened_by=principal.actor,
            expires_date=clock.iso(now + timedelta(minutes=minutes)),
            closed_date=None,
            closed_by=None,
        )
        details = {"tunnel_id": tunnel.id, "services": services, "minutes": minutes}
        opened = audit.event(
            "tunnel_opened",
            principal,
            org_id=device.org_id,
            target=("device", device.id),
            details=details,
        )
        await self._db.write(audit.along(lambda c: self._create(c, tunnel), opened))
        log.info(
            "tunnel %s opened to device %s by %s %s: services %s, %d minutes%s",
            tunnel.id,
            device.id,
            principal.kind,
            principal.actor,
            ",".join(services),
            minutes,
            f", details mailed to user {to}" if to else "",
        )
        if to:
            await self._mail(to, device, tunnel, client_token)
        self._notify(device, notices.opened(device, tunnel, self._base_url))
        return {
            "tunnel": {"uuid": tunnel.id, "timeout": minutes, "client_access_token": client_token}
        }

    def _create(self, conn: Tx, tunnel: Tunnel) -> None:
        """A 409 when the device has `tunnel_max_open_per_device` open already (counted
        in the write, so two opens at once never both pass): each open tunnel is a
        write, an audit event, a notice to the device, maybe a mail, and up to
        `tunnel_max_streams` streams, and once they were unbounded."""
        most = self.hub.limits.max_open
        if store.count_open(conn, tunnel.device_id, tunnel.opened_date) >= most:
            raise Conflict(
                f"The device has {most} open tunnels, the most tunnel_max_open_per_device"
                " allows: close one first"
            )
        store.create(conn, tunnel)

    def list(self, principal: Principal, device_id: str) -> Row:
        self._target(principal, device_id, "read")
        found = views.open_for(self._db, [device_id], self.hub.limits.max_open)
        return {"tunnels": found.get(device_id, [])}

    def get(self, principal: Principal, device_id: str, tunnel_id: str) -> Row:
        self._target(principal, device_id, "read")
        tunnel = self._db.read(lambda c: store.get(c, device_id, tunnel_id))
        if tunnel is None or not _is_open(tunnel):
            raise NotFound("Tunnel not found")
        return {"tunnel": views.present(tunnel)}

    async def close(self, principal: Principal, device_id: str, tunnel_id: str | None) -> int:
        """Close one tunnel (404 when it is not open), or all of them (`tunnel_id` None)."""
        target = self._target(principal, device_id, "manage")
        wanted = None if tunnel_id is None else [tunnel_id]
        now = clock.now_iso()
        device = target.account
        closing = audit.event(  # one per tunnel closed, made here where the request is known
            "tunnel_closed", principal, org_id=device.org_id, target=("device", device.id)
        )

        def write(conn: Tx) -> list[str]:
            closed = store.close(conn, device_id, wanted, now, principal.actor)
            audit.add(conn, *(_closed_event(closing, done) for done in closed))
            return closed

        closed = await self._db.write(write)
        if tunnel_id is not None and not closed:
            raise NotFound("Tunnel not found")
        for done in closed:
            log.info(
                "tunnel %s to device %s closed by %s %s",
                done,
                device_id,
                principal.kind,
                principal.actor,
            )
            await self.hub.drop(done, f"closed by {principal.actor}")
            self._notify(target.account, notices.closed(done))
        return len(closed)

    async def device_token(self, principal: Principal, tunnel_id: str) -> Row:
        """A new token for the device end of one of the caller's open tunnels (the caller
        is that device, signed in with its own credentials); it replaces the one before, so
        only the latest ask connects. 404 for anything else: another device's tunnel, a
        closed or expired one, or a caller that is not a device."""
        if principal.kind != "device" or principal.org_id is None:
            raise NotFound("Tunnel not found")
        token, digest = tokens.new_token("device")
        now, device_id = clock.now_iso(), principal.account_id
        taken = audit.event(
            "tunnel_token_taken",
            principal,
            target=("device", device_id),
            details={"tunnel_id": tunnel_id},
        )

        def write(conn: Tx) -> bool:
            if not store.set_device_token(conn, tunnel_id, device_id, digest, now):
                return False
            audit.add(conn, taken)  # a credential issued: recorded with it, never the token
            return True

        if not await self._db.write(write):
            raise NotFound("Tunnel not found")
        log.info("tunnel %s: device %s took its end's token", tunnel_id, device_id)
        return {"destination_token": token}

    # -- the ends ------------------------------------------------------------------------
    def authenticate(self, tunnel_id: str, token: str | None, end: End) -> Tunnel:
        """The open tunnel this token belongs to, at this end; Unauthenticated otherwise
        (a wrong token, the other end's, another tunnel's, a closed or expired tunnel)."""
        if token is None or not tokens.is_token_of(token, end):
            raise Unauthenticated(INVALID)
        digest, now = tokens.token_hash(token), clock.now_iso()
        tunnel = self._db.read(lambda c: store.open_by_token(c, tokens.COLUMN[end], digest, now))
        if tunnel is None or tunnel.id != tunnel_id:
            raise Unauthenticated(INVALID)
        return tunnel

    # -- helpers -------------------------------------------------------------------------
    def _recipient(self, device: Device, user_id: Any) -> str | None:
        if user_id is None:
            return None
        if not isinstance(user_id, str):
            raise ValidationError("sendto_user_id", "must be a user ID")
        try:
            to = self._messages.recipient(user_id)
        except NotFound:
            to = None
        if to is None or to.org_id != device.org_id:
            raise ValidationError("sendto_user_id", "does not name a user of this organization")
        if not to.email:
            raise ValidationError("sendto_user_id", "this user has no e-mail address")
        return user_id

    async def _mail(self, user_id: str, device: Device, tunnel: Tunnel, token: str) -> None:
        to = self._messages.recipient(user_id)
        details = {
            "device_name": device.name,
            "tunnel_id": tunnel.id,
            "services": ", ".join(tunnel.services),
            "expires_date": tunnel.expires_date,
            "client_access_token": token,
            "connect_command": notices.connect_command(self._base_url, tunnel),
        }
        await self._messages.tunnel_details(to, details)

    def _notify(self, device: Device, payload: bytes) -> None:
        if self.notify is None:
            log.warning("tunnel notice to device %s not sent: no MQTT broker", device.id)
            return
        reached = self.notify(device.id, notices.topic(device), payload)
        if reached == 0:
            log.info("tunnel notice to device %s: no session of it is subscribed", device.id)


def _closed_event(template: AuditEvent, tunnel_id: str) -> AuditEvent:
    return replace(template, id=new_id(), details={"tunnel_id": tunnel_id})


def _is_open(tunnel: Tunnel) -> bool:
    return tunnel.closed_date is None and tunnel.expires_date > clock.now_iso()
