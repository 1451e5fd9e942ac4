"""Whether an account may read a change (edge/live/readable.py): a batch asks each group's
and device's rights once, and answers as `may_read` answers each change."""

from __future__ import annotations

from collections import Counter

from edge.kernel.principal import Principal
from edge.live.feed import Change, Feed
from edge.live.readable import PathReader, Readable

WHO = Principal("user", "u1", "s1", "org")


class Rights:
    """Rights of one account: data under /pub of group g, files of group g, device d; and
    how often each group's or device's rights were opened."""

    def __init__(self) -> None:
        self.opened: Counter[tuple[str, str]] = Counter()

    def data(self, who: Principal, group_id: str, path: str) -> bool:
        return self.data_reader(who, group_id)(path)

    def files(self, who: Principal, group_id: str, path: str) -> bool:
        return self.files_reader(who, group_id)(path)

    def device(self, who: Principal, device_id: str) -> bool:
        self.opened["device", device_id] += 1
        return device_id == "d"

    def data_reader(self, who: Principal, group_id: str) -> PathReader:
        self.opened["data", group_id] += 1
        return lambda path: group_id == "g" and path.startswith("/pub")

    def files_reader(self, who: Principal, group_id: str) -> PathReader:
        self.opened["files", group_id] += 1
        return lambda path: group_id == "g"

    def readable(self) -> Readable:
        return Readable(self.data, self.files, self.device, self.data_reader, self.files_reader)


def changes() -> list[Change]:
    feed = Feed(300, 1000)
    feed.begin(1)
    told: list[Change] = []
    for n in range(50):
        for group in ("g", "h"):
            told.append(feed.publish("data", "org", group, f"/pub/{n}", {}))
            told.append(feed.publish("data", "org", group, f"/private/{n}", {}))
            told.append(feed.publish("files", "org", group, f"/f{n}", {}))
        for device in ("d", "e"):
            told.append(feed.publish("presence", "org", device, None, {}))
        told.append(feed.publish("data", "elsewhere", "g", f"/pub/{n}", {}))
    return told


def test_a_batch_answers_as_each_change_is_answered() -> None:
    readable = Rights().readable()
    batch = changes()
    assert readable.readable_of(WHO, batch) == [c for c in batch if readable.may_read(WHO, c)]


def test_a_batch_opens_each_groups_and_devices_rights_once() -> None:
    rights = Rights()
    told = rights.readable().readable_of(WHO, changes())
    assert len(told) == 50 * 3  # /pub of g, files of g, device d
    assert set(rights.opened.values()) == {1}
    assert set(rights.opened) == {
        ("data", "g"),
        ("data", "h"),
        ("files", "g"),
        ("files", "h"),
        ("device", "d"),
        ("device", "e"),
    }
