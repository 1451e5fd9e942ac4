"""One take-and-reset count read by two readers. The broker's published messages by
organization (`MqttService.published`) are handed out once: each call returns what came in
since the last and forgets it. Billing's meter and the pulse both need every message, each
on its own schedule, so each gets a reader here: a call takes the broker's new counts into
every reader's share and returns (and empties) the caller's own."""

from __future__ import annotations

from collections.abc import Callable, Mapping

Source = Callable[[], Mapping[str, int]]


class Shared:
    def __init__(self, source: Source) -> None:
        self._source = source
        self._shares: dict[str, dict[str, int]] = {}

    def reader(self, name: str) -> Source:
        """A source for one reader, counting from now on."""
        self._shares[name] = {}

        def take() -> Mapping[str, int]:
            self._spread(self._source())
            taken, self._shares[name] = self._shares[name], {}
            return taken

        return take

    def _spread(self, fresh: Mapping[str, int]) -> None:
        for share in self._shares.values():
            for key, value in fresh.items():
                share[key] = share.get(key, 0) + value
