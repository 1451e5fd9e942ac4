"""Where the feed's changes come from: the change hooks of data, files, presence and
twins, each turned into the fields a client receives. Connected once, by the composition
root; job progress (edge/jobs/notices.py) is one more."""

from __future__ import annotations

from edge.data.changes import DataChanged
from edge.devices.presence import PresenceEvent
from edge.files.changes import FileChanged
from edge.jobs.notices import JobProgress
from edge.kernel.events import Hook
from edge.live.feed import Feed
from edge.twins.twins import TwinChanged


def connect(
    feed: Feed,
    data: Hook[DataChanged],
    files: Hook[FileChanged],
    presence: Hook[PresenceEvent],
    twins: Hook[TwinChanged],
    jobs: Hook[JobProgress],
) -> None:
    data.listen(lambda event: _path_change(feed, "data", event))
    files.listen(lambda event: _path_change(feed, "files", event))
    presence.listen(lambda event: _presence(feed, event))
    twins.listen(lambda event: _twin(feed, event))
    jobs.listen(lambda event: _job(feed, event))


def _path_change(feed: Feed, kind: str, event: DataChanged | FileChanged) -> None:
    fields = {"group_id": event.group_id, "path": event.path, "operation": event.operation}
    feed.publish(kind, event.org_id, event.group_id, event.path, fields)


def _presence(feed: Feed, event: PresenceEvent) -> None:
    fields: dict[str, object] = {"device_id": event.device_id, "online": event.online}
    if event.reason is not None:
        fields["reason"] = event.reason
    feed.publish("presence", event.org_id, event.device_id, None, fields)


def _twin(feed: Feed, event: TwinChanged) -> None:
    device = event.device
    fields = {"device_id": device.id, "version": event.twin.version}
    feed.publish("twins", device.org_id, device.id, None, fields)


def _job(feed: Feed, event: JobProgress) -> None:
    fields = {"job_id": event.job_id, "state": event.state, "counts": event.counts}
    feed.publish("jobs", event.org_id, event.job_id, None, fields)
