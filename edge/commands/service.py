"""Commands with replies (docs/commands.md): a named request sent to a device over MQTT,
which answers on the command's reply topic.

- Sending (`send`): those who may update the device. The command is written (with its
  audit event, without its payload) before it is published, at QoS 1, to the device's
  own sessions only (as tunnel notices are) on `<root>/devices/<id>/commands/<request_id>`.
  The caller waits for the reply up to `timeout` seconds (504 past it); a device that is
  offline is a 409, once the body is found valid (a bad one is its 400 whatever the
  device's state). With `queue`, the caller does not wait (202): the command is delivered
  now if the device is online, else when it next connects (presence events) or a
  session of it subscribes to its commands, until its `ttl`; what a session has no room
  for goes out once its queue has gone out (the broker's inbox calls `offer_queued` on
  each of these), never by polling. Only for a device that keeps a persistent session
  (one that is subscribed to its commands topic while away).
- Replies (`reply`): the broker hands over what the device's own sessions publish on
  `.../commands/<request_id>/reply` (embedded_broker/acl.py lets no one else publish
  there); the first valid reply of a command still waiting is kept, later ones ignored.
- A command's MQTT message is at most the broker's `mqtt_max_message_bytes` (413 past it):
  what no client may send, no device is sent either.
- At most `rate_per_minute` commands per device per minute, and of them at most
  `caller_rate_per_minute` from one caller (the device itself included), counted in the
  write that records the command, so two callers at once cannot both take the last one
  and one caller cannot take the device's whole minute from its admins.
- A caller's payloads count against the device's `device_bytes` until they are swept,
  with the others' commands still waiting counted up to half of it; a caller's own
  waiting commands may hold at most the other half (its share). No caller, nor several
  together, can lock another out, and the disk stays bounded per caller. The replies to
  a caller's commands count apart, against a budget of their own of `device_bytes`,
  when they come: a reply never stops its caller from sending. A queued command not yet
  answered may be canceled (`cancel`): its bytes free at once. A refusal's Retry-After is
  when room frees (the counted commands' ends).
- Finished commands are kept `retention_hours`; `sweep` (hourly) ends the expired and
  deletes the old: a backstop for the record only, since an expired command is never
  read for delivery whether or not the sweep has marked it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from edge.accounts.devices import Devices
from edge.commands import messages
from edge.devices.presence import PresenceEvent
from edge.devices.topics import Notify
from edge.kernel import audit, clock
from edge.kernel.errors import (
    BadReply,
    Conflict,
    NoReply,
    NotFound,
    TooLarge,
    TooManyAttempts,
)
from edge.kernel.listing import ListQuery, Page, fetch
from edge.kernel.principal import Principal
from storage import commands as store
from storage import devices as device_store
from storage.commands import Command
from storage.database import Database
from storage.records import Device
from storage.rows import Tx

Row = dict[str, Any]
TABLE = store.LIST
log = logging.getLogger("edge.commands")
DELIVERY_BATCH = 100  # queued commands read and offered at a time
MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class CommandLimits:
    rate_per_minute: int
    retention_hours: int
    max_message_bytes: int = 256 * 1024  # the broker's mqtt_max_message_bytes
    device_bytes: int = 4 * 1024 * 1024  # command_device_bytes
    caller_rate_per_minute: int = 20  # command_caller_rate_limit


class Commands:
    def __init__(self, db: Database, devices: Devices, limits: CommandLimits) -> None:
        self._db = db
        self._devices = devices
        self.limits = limits
        # Set by edge/app.py (the broker is not an edge service): how a command reaches a
        # device's sessions (a queued one: away persistent sessions too; one waited for:
        # connected sessions only), and whether a device keeps a persistent session.
        self.notify: Notify | None = None
        self.notify_connected: Notify | None = None
        self.persistent: Callable[[str], bool] = lambda _: False
        # The callers waiting for a reply: request ID -> (device ID, its future).
        self._waiting: dict[str, tuple[str, asyncio.Future[Command]]] = {}
        self._draining: set[str] = set()  # devices whose queued commands are being delivered
        self._again: set[str] = set()  # ... and told meanwhile that more may go out
        self.counts = dict.fromkeys(("sent", "answered", "timed_out", "bad_replies"), 0)
        devices.presence.events.listen(self._presence)

    # -- sending -------------------------------------------------------------------------
    async def send(self, principal: Principal, device_id: str, body: Row) -> tuple[int, Row]:
        """(200, the answered command), or (202, the queued command)."""
        device = self._device(principal, device_id)
        queue = bool(body.get("queue", False))
        timeout, lasts = messages.lasts(body)
        command = messages.new(device, principal.actor, body, queue, lasts)
        size = len(messages.message(command))
        if size > self.limits.max_message_bytes:
            raise TooLarge(
                f"payload: the command's MQTT message would be {size} bytes, over the"
                f" broker's limit of {self.limits.max_message_bytes}"
            )
        online = self._reachable(device, queue)
        await self._record(principal, device, command)
        self.counts["sent"] += 1
        if queue:
            if online:
                self.offer_queued(device_id)
            return 202, messages.view(command)
        return 200, messages.view(await self._call(device, command, timeout))

    def _reachable(self, device: Device, queue: bool) -> bool:
        """Whether the device is online; a 409 when the command could not reach it (it is
        suspended, or offline and would not get it). Asked after the body is checked: a
        body that is wrong is a 400 naming its field whatever the device's state, so a
        caller fixes the body first, not a device that would then refuse it anyway (#29)."""
        if not device.is_active:
            raise Conflict("Device is not active: reactivate it before sending it commands")
        online = self._devices.presence.is_online(device.id)
        if queue and not online and not self.persistent(device.id):
            raise Conflict(
                "Device is offline and keeps no persistent session: it would not get the"
                " command when it comes back (connect it once with clean_session false)"
            )
        if not queue and not online:
            raise Conflict("Device is offline: send with queue true to deliver it later")
        return online

    async def _record(self, principal: Principal, device: Device, command: Command) -> None:
        details = {"command_id": command.id, "name": command.name, "queued": command.queued}
        sent = audit.event(
            "command_sent",
            principal,
            org_id=device.org_id,
            target=("device", device.id),
            details=details,
        )
        await self._db.write(audit.along(lambda c: self._insert(c, command), sent))

    def _insert(self, conn: Tx, command: Command) -> None:
        self._within_rate(conn, command)
        self._within_budget(conn, command)
        store.create(conn, command)

    def _within_rate(self, conn: Tx, command: Command) -> None:
        """At most `rate_per_minute` commands to the device a minute from all callers, and
        `caller_rate_per_minute` from one (so no caller, nor the device itself, takes the
        whole of it from the others). Retry-After: when the first command counted
        turns a minute old, which frees one."""
        now = clock.now()
        since = clock.iso(now - MINUTE)
        caller = self.limits.caller_rate_per_minute
        for by, limit, whose in (
            (None, self.limits.rate_per_minute, "per device per minute"),
            (command.created_by, caller, "per caller per device per minute"),
        ):
            count, first = store.sent_since(conn, command.device_id, since, by)
            if count >= limit:
                setting = " (command_caller_rate_limit)" if by else ""
                raise TooManyAttempts(
                    f"Too many commands: at most {limit} {whose}{setting}",
                    retry_after=_seconds(clock.parse(first) + MINUTE - now),
                )

    def _within_budget(self, conn: Tx, command: Command) -> None:
        """What the device's commands keep counts against `device_bytes` (a caller, the
        device itself included, cannot fill the disk through them): the caller's own
        commands until swept, and the others' still waiting up to half of it (`share`). A
        caller's own waiting commands may hold at most that half: no caller, nor several
        together, can take the room of another (a lesser caller's week-long queue kept
        refilling the device's whole budget as fast as its admin canceled it). Replies
        count apart (`_keep_reply`). A command larger than a caller's share never fits: a
        413, not a wait."""
        budget, share = self.limits.device_bytes, self.share
        size = _size(command.payload)
        if size > share:
            raise TooLarge(
                f"payload: {size} bytes, over a caller's share of {share} of the device's"
                " budget (half of command_device_bytes)"
            )
        held = store.held_bytes(conn, command.device_id, self.holder(command.created_by))
        if held.waiting + size > share:
            self._refuse(
                conn,
                command,
                f"your commands still waiting for this device hold {held.waiting} bytes of"
                f" payloads, and this one's {size} would pass a caller's share of {share}"
                f" (half of command_device_bytes); they free as they are answered, expire"
                " or are canceled (POST .../commands/{request_id}/cancel)",
                held.waiting + size - share,
                0,
            )
        others = min(held.others, budget - share)
        kept = held.waiting + held.ended + others
        if kept + size > budget:
            self._refuse(
                conn,
                command,
                f"your commands to this device hold {held.waiting + held.ended} bytes of"
                f" payloads (the finished ones until they are swept, command_retention_hours"
                f" after they end) and the others' waiting commands count {others}, and this"
                f" one's {size} would pass its budget of {budget} (command_device_bytes);"
                " canceling your queued ones frees their bytes now",
                kept + size - budget,
                budget - share,
            )

    @property
    def share(self) -> int:
        """The payload bytes one caller's waiting commands may hold on a device, and the
        most the others' waiting commands count against it: half the budget each."""
        return self.limits.device_bytes // 2

    def _refuse(self, conn: Tx, command: Command, why: str, needed: int, others_cap: int) -> None:
        """A 429 saying `why`, with the seconds until `needed` bytes of what is counted
        free (`others_cap` as store.frees_in takes it)."""
        holder = self.holder(command.created_by)
        wait = store.frees_in(conn, command.device_id, holder, needed, others_cap)
        raise TooManyAttempts(
            f"Too many command bytes: {why}",
            # all that is counted frees in time, and what is needed is at most what is
            # counted (the size is within the share): wait is never None
            retry_after=_seconds(timedelta(seconds=wait or 0)),
        )

    def holder(self, by: str) -> store.Holder:
        """`by`'s view of a device's byte budget, now."""
        now = clock.now()
        hours = self.limits.retention_hours
        return store.Holder(by, clock.iso(now), clock.iso(now - timedelta(hours=hours)), hours)

    def _over_budget(self, conn: Tx, device_id: str, by: str, value: Row) -> tuple[int, int] | None:
        """(reply bytes kept to `by`'s commands, bytes of `value`) when keeping the reply
        `value` too would pass the device's budget; None when it fits. Read in the write
        that would keep it."""
        kept = store.reply_bytes(conn, device_id, self.holder(by))
        size = _size(value)
        return (kept, size) if kept + size > self.limits.device_bytes else None

    async def _call(self, device: Device, command: Command, timeout: int) -> Command:
        future: asyncio.Future[Command] = asyncio.get_running_loop().create_future()
        self._waiting[command.id] = (device.id, future)
        try:
            if self._publish_now(device, command) == 0:
                await self._db.write(lambda c: store.timed_out(c, command.id, clock.now_iso()))
                raise Conflict(
                    "Device is online but no connected session of it is subscribed to its"
                    " commands topic: send with queue true to deliver it later"
                )
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout)
            except TimeoutError:
                return await self._timed_out(command, timeout)
        finally:
            self._waiting.pop(command.id, None)

    async def _timed_out(self, command: Command, timeout: int) -> Command:
        """504, unless the reply was written meanwhile (then it is the answer)."""
        now = clock.now_iso()
        if await self._db.write(lambda c: store.timed_out(c, command.id, now)):
            self.counts["timed_out"] += 1
            raise NoReply(f"The device did not answer within {timeout} s (request {command.id})")
        found = self._db.read(lambda c: store.get(c, command.device_id, command.id))
        if found is None or found.state != "answered":
            raise NoReply(f"The device did not answer within {timeout} s (request {command.id})")
        return found

    def _publish(self, device: Device, command: Command) -> int:
        assert self.notify is not None, "edge/app.py sets how commands reach devices"
        return self.notify(device.id, messages.topic(device, command.id), messages.message(command))

    def _publish_now(self, device: Device, command: Command) -> int:
        """To the sessions connected now: an away persistent session would take the
        command and count as delivered while its caller waits out the timeout."""
        assert self.notify_connected is not None, "edge/app.py sets how commands reach devices"
        topic = messages.topic(device, command.id)
        return self.notify_connected(device.id, topic, messages.message(command))

    async def _deliver(self, device: Device, commands: list[Command]) -> bool:
        """Offer the commands in order to the device's sessions that have room for them
        (`notify`) and mark delivered those taken; whether all were. The first one no
        session takes stops the batch, so the order holds: it and the rest stay queued."""
        got: list[str] = []
        for command in commands:
            if self._publish(device, command) == 0:
                break
            got.append(command.id)
        if got:
            await self._db.write(lambda c: store.delivered(c, got, clock.now_iso()))
        return len(got) == len(commands)

    def _presence(self, event: PresenceEvent) -> None:
        """A device that comes online gets what waits for it."""
        if event.online:
            self.offer_queued(event.device_id)

    def offer_queued(self, device_id: str) -> None:
        """Offer a device's queued commands to its sessions now: it came online, a session
        of it subscribed to its commands, or one that had no room has room again (the
        broker's inbox, edge/commands/inbox.py). When a delivery is under way already, it
        reads once more before it ends, so what this news made deliverable is not missed."""
        if device_id in self._draining:
            self._again.add(device_id)
            return
        self._draining.add(device_id)
        asyncio.ensure_future(self._drain(device_id)).add_done_callback(_report_failure)

    async def _drain(self, device_id: str) -> None:
        """One delivery, and its end marked in the same step as its last look at `_again`:
        marked in the task's done callback (a step later), news that came in between was
        told to a delivery that had already ended, and what it made deliverable stayed
        queued with no later news to send it (a session's room, lost under load)."""
        try:
            await self._deliver_waiting(device_id)
        finally:
            self._draining.discard(device_id)
            self._again.discard(device_id)

    async def _deliver_waiting(self, device_id: str) -> None:
        """Deliver in batches of DELIVERY_BATCH, each within the room the device's sessions
        have: a big backlog neither holds the loop nor overflows a session. What no
        session takes (none subscribed, or no room) stays queued until the next news of
        the device (`offer_queued`), not polled for."""
        device = self._db.read(lambda c: device_store.get(c, device_id))
        while device is not None and device.is_active:
            self._again.discard(device_id)
            batch = self._db.read(lambda c: self._batch(c, device_id))
            if not batch:
                return
            if not await self._deliver(device, batch) and device_id not in self._again:
                return

    @staticmethod
    def _batch(conn: Tx, device_id: str) -> list[Command]:
        return store.waiting_for(conn, device_id, clock.now_iso(), DELIVERY_BATCH)

    # -- replies -------------------------------------------------------------------------
    async def reply(self, device_id: str, topic_name: str, payload: bytes) -> None:
        """What the device's own session published on a reply topic (from the broker's
        inbox, edge/commands/inbox.py): recorded before the device's PUBACK. It never
        raises: the server's failure, or a reply it cannot read, must not end the device's
        connection. An invalid reply is acknowledged, counted and logged once, with why
        and never with its payload; a caller waiting for it gets a 502 at once, and the
        command takes a valid reply still, until its time is up."""
        request_id = messages.request_of(topic_name)
        try:
            parsed = messages.parse_reply(payload)
            if isinstance(parsed, str):
                self.counts["bad_replies"] += 1
                log.warning(
                    "command %s: device %s sent an invalid reply (%d bytes): %s",
                    request_id,
                    device_id,
                    len(payload),
                    parsed,
                )
                self._refuse_reply(device_id, request_id, parsed)
                return
            await self._answered(device_id, request_id, *parsed)
        except Exception:  # the server's fault (the reply was valid): worth its traceback
            log.exception(
                "command %s: the reply of device %s was not recorded", request_id, device_id
            )

    def _refuse_reply(self, device_id: str, request_id: str, why: str) -> None:
        """A caller waiting for this reply is answered at once (502), not at its timeout:
        the device did answer, with something the server cannot take."""
        future = self._caller(device_id, request_id)
        if future is not None:
            future.set_exception(
                BadReply(f"The device's reply is not valid ({why}; request {request_id})")
            )

    async def _answered(self, device_id: str, request_id: str, status: int, body: Row) -> None:
        now = clock.now_iso()
        done = await self._db.write(
            lambda c: self._keep_reply(c, device_id, request_id, now, status, body)
        )
        if done is None:
            log.info("command %s: a reply from device %s came too late", request_id, device_id)
            return
        self.counts["answered"] += 1
        future = self._caller(device_id, request_id)
        if future is not None:
            future.set_result(done)

    def _keep_reply(
        self, conn: Tx, device_id: str, request_id: str, now: str, status: int, body: Row
    ) -> Command | None:
        """The reply, recorded; its payload only within the budget of the replies kept
        to its caller's commands on the device (`device_bytes`, counted apart from the
        payloads: a reply, which its caller cannot cancel, never stops it sending): past
        it, the command is answered with its status and without the payload, which the
        view marks as dropped."""
        found = store.get(conn, device_id, request_id)
        by = found.created_by if found is not None else ""
        over = self._over_budget(conn, device_id, by, body)
        if over is not None:
            kept, size = over
            log.warning(
                "command %s: the reply of device %s keeps its status, not its payload:"
                " %d bytes would pass the %d its caller's replies may keep (command_device_bytes;"
                " %d kept)",
                request_id,
                device_id,
                size,
                self.limits.device_bytes,
                kept,
            )
        payload = body if over is None else None
        return store.answered(conn, device_id, request_id, now, status, payload)

    def _caller(self, device_id: str, request_id: str) -> asyncio.Future[Command] | None:
        """The future of the caller still waiting for this device's command, if any."""
        device, future = self._waiting.get(request_id, ("", None))
        return future if device == device_id and future is not None and not future.done() else None

    # -- reading -------------------------------------------------------------------------
    async def list(self, principal: Principal, device_id: str, query: ListQuery) -> Page:
        """A page of the device's commands, in the list conventions (newest first is the
        HTTP layer's default), each without its payloads."""
        self._device(principal, device_id)
        page = await fetch(self._db, TABLE, query, *store.of_device(device_id))
        page.rows = [messages.view(c, whole=False) for c in page.rows]
        return page

    def get(self, principal: Principal, device_id: str, request_id: str) -> Row:
        self._device(principal, device_id)
        found = self._db.read(lambda c: store.get(c, device_id, request_id))
        if found is None:
            raise NotFound("Command not found")
        return {"command": messages.view(found)}

    def _device(self, principal: Principal, device_id: str) -> Device:
        """The device, for a caller who may send it commands (a 404 or 403 otherwise):
        they are read and canceled by those who may send them, a suspended device's too."""
        target = self._devices.target(principal, device_id)
        self._devices.require(target, "update")
        return target.account

    # -- canceling -----------------------------------------------------------------------
    async def cancel(self, principal: Principal, device_id: str, request_id: str) -> Row:
        """End a queued command still waiting for its device or its reply: those who may
        send it may, a suspended device's too (it frees the device's bytes at once). It
        stays readable, `canceled` and without its payload, until the sweep deletes it;
        a reply that comes later is ignored. Any other state is a 409."""
        device = self._device(principal, device_id)
        found = self._db.read(lambda c: store.get(c, device_id, request_id))
        if found is None:
            raise NotFound("Command not found")
        details = {"command_id": request_id, "name": found.name}
        canceled = audit.event(
            "command_canceled",
            principal,
            org_id=device.org_id,
            target=("device", device_id),
            details=details,
        )
        now = clock.now_iso()

        def end(conn: Tx) -> Command:
            if not store.cancel(conn, device_id, request_id, now):
                state = messages.view(store.get(conn, device_id, request_id) or found)["state"]
                raise Conflict(
                    f"Command is {state}: only a queued command still waiting for its device"
                    " or its reply may be canceled"
                )
            ended = store.get(conn, device_id, request_id)
            assert ended is not None, "canceled in this transaction"
            return ended

        return {"command": messages.view(await self._db.write(audit.along(end, canceled)))}

    # -- upkeep --------------------------------------------------------------------------
    async def sweep(self) -> tuple[int, int]:
        """End the commands past their time; delete those ended over `retention_hours`
        ago. Returns (expired, deleted)."""
        now = clock.now()
        before = clock.iso(now - timedelta(hours=self.limits.retention_hours))

        def upkeep(conn: Tx) -> tuple[int, int]:
            return store.expire(conn, clock.iso(now)), store.purge_ended_before(conn, before)

        return await self._db.write(upkeep)


def _size(value: Row) -> int:
    """The bytes a payload or a reply keeps (as the budget counts them)."""
    return len(json.dumps(value).encode())


def _seconds(wait: timedelta) -> int:
    """A Retry-After: whole seconds, rounded up, at least one."""
    return max(1, math.ceil(wait.total_seconds()))


def _report_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("commands: a delivery or a reply failed", exc_info=task.exception())
