"""A device's job requests over MQTT, answered by the server (docs/jobs.md), as the
broker's server inbox (embedded_broker/inbox.py; met by shape, nothing of the broker is
imported).

The broker hands over what a device publishes on its own `jobs/get`, `jobs/<job_id>/get`
and `jobs/<job_id>/update` (the topic ACL refused anyone else's publish there): the
answer goes to the device's own sessions after the update is durable, and the broker
acknowledges the request after that. When a session of the device subscribes to its
`jobs/notify-next`, or comes back holding that subscription, it gets its next execution
at once: a notice lost to a restart or an absence is sent again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from edge.devices import replies
from edge.devices.mqtt_clients import MqttClient
from edge.jobs import topics
from edge.jobs.executions import DeviceJobs
from edge.jobs.notices import NOTHING, Notices
from edge.kernel import errors

log = logging.getLogger("edge.jobs")


class JobInbox:
    def __init__(self, executions: DeviceJobs, notices: Notices) -> None:
        self._executions = executions
        self._notices = notices

    def _own(self, client: MqttClient) -> str | None:
        return client.own_topic(topics.JOBS)

    def takes(self, client: MqttClient, topic: str) -> bool:
        own = self._own(client)
        if own is None or not topic.startswith(own + "/"):
            return False
        rest = topic[len(own) + 1 :].split("/")
        if rest == [topics.GET]:
            return True
        return len(rest) == 2 and rest[0] != "" and rest[1] in (topics.GET, topics.UPDATE)

    def watches(self, client: MqttClient) -> Sequence[str]:
        own = self._own(client)
        return () if own is None else (f"{own}/{topics.NOTIFY_NEXT}",)

    def subscribed(self, client: MqttClient, topic: str, sent: int | None) -> int | None:
        """The device's next execution, at once, unless this connection of the session
        was sent that one already (`sent` marks it): a SUBSCRIBE repeated in a loop costs
        no notice. With nothing to do, nothing is sent (as if `{}` had been)."""
        mark = self._notices.next_for(client.account_id, NOTHING if sent is None else sent)
        return sent if mark is None else mark

    async def receive(self, client: MqttClient, topic: str, payload: bytes) -> None:
        token = None
        try:
            body = replies.request_body(payload)
            token = body.get("client_token")
            answer = await self._answer(client, topic, body)
            self._reply(client, f"{topic}/accepted", topics.reply(answer, token))
        except errors.EdgeError as exc:
            rejected = {"code": replies.code_of(exc), "message": exc.message, **exc.extension}
            self._reply(client, f"{topic}/rejected", topics.reply(rejected, token))
        except Exception:
            log.exception("job request of device %s failed", client.account_id)
            failed = {"code": 500, "message": "Internal error: the request was not applied"}
            self._reply(client, f"{topic}/rejected", topics.reply(failed, token))

    async def _answer(self, client: MqttClient, topic: str, body: dict[str, Any]) -> Any:
        """The answer to a request, the device checked (still active) in the same read or
        write that answers it: no read of its own on the event loop."""
        device = client.account_id
        levels = topic[len(self._own(client) or "") + 1 :].split("/")
        if levels == [topics.GET]:
            return self._executions.pending(device)
        job_id, action = levels
        if action == topics.GET:
            return self._executions.get(device, job_id)
        return await self._executions.update(device, job_id, body)

    def _reply(self, client: MqttClient, topic: str, payload: bytes) -> None:
        if self._notices.notify is not None:
            self._notices.notify(client.account_id, topic, payload)
