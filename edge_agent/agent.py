"""The agent: its features (twin, commands, jobs, tunnels, as configured) on one MQTT link,
and, when it signs in by a client certificate, that certificate's renewal (renewal.py).

Each message goes to the feature whose name is the first level of its topic under the
device's namespace, through a queue of that feature's own, so one feature's slow work
never holds up another's messages and each feature sees its messages in order. After each
connection every feature is told so (in the same queue, after what came before), to catch
up.
"""

from __future__ import annotations

import asyncio

from edge_agent.commands import Commands
from edge_agent.feature import Feature
from edge_agent.jobs import Jobs
from edge_agent.link import Link, Message, say
from edge_agent.pair import Pair
from edge_agent.renewal import Renewal
from edge_agent.settings import Settings
from edge_agent.tunnels import Tunnels
from edge_agent.twin import Twin

CONNECTED = None  # the queue's item for "a connection was made"
Item = Message | None


class Agent:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.link = Link(settings, [], self._deliver, self._connected)
        self.features = features(settings, self.link)
        self.link.filters = [topic for feature in self.features for topic in feature.filters()]
        self._queues: dict[str, asyncio.Queue[Item]] = {}
        self.renewal = renewal(settings, self.link)

    async def run(self, stop: asyncio.Event) -> None:
        self._queues = {feature.name: asyncio.Queue() for feature in self.features}
        workers = [asyncio.create_task(self._work(feature)) for feature in self.features]
        if self.renewal is not None:
            self.renewal.recover()  # before the link signs in with the pair
            workers.append(asyncio.create_task(self.renewal.run(stop)))
        try:
            await self.link.run(stop)
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            for feature in self.features:
                await feature.close()

    def _deliver(self, message: Message) -> None:
        below = message.topic.removeprefix(self.settings.namespace + "/")
        queue = self._queues.get(below.split("/", 1)[0])
        if queue is None:
            self.link.ack(message)  # nobody here listens there
            return
        queue.put_nowait(message)

    def _connected(self) -> None:
        print(
            f"agent for device {self.settings.device_id}: connected, waiting on"
            f" {', '.join(self.link.filters)}",
            flush=True,
        )
        for queue in self._queues.values():
            queue.put_nowait(CONNECTED)

    async def _work(self, feature: Feature) -> None:
        queue = self._queues[feature.name]
        while True:
            item = await queue.get()
            try:
                await (feature.connected() if item is None else feature.handle(item))
            except Exception as failed:  # one message's failure must not stop the feature
                say(f"{feature.name}: {failed!r}")


def renewal(settings: Settings, link: Link) -> Renewal | None:
    """The certificate's renewal, when the agent signs in by one."""
    if settings.certificate_file is None or settings.key_file is None:
        return None
    return Renewal(settings, Pair(settings.certificate_file, settings.key_file), link)


def features(settings: Settings, link: Link) -> list[Feature]:
    """The features the settings ask for: a twin, commands, jobs, tunnels."""
    made: list[Feature] = []
    if settings.twin is not None:
        made.append(Twin(settings, settings.twin, link))
    if settings.commands is not None:
        made.append(Commands(settings, settings.commands, link))
    if settings.jobs is not None:
        made.append(Jobs(settings, settings.jobs, link))
    if settings.services:
        made.append(Tunnels(settings, link))
    return made
