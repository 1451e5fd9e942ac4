"""What the agent keeps of each job it works on, in `<state_dir>/jobs/<job_id>.json`
(0600, written whole and renamed, so a crash leaves the old record or the new one):

- `{"attempts": n, "handler_started": true}` once the handler of that attempt was started,
  so that after a restart it is not started again (unless `jobs.idempotent`);
- `{"attempts": n, "outcome": {"state", "status_details", "progress"}}` once the handler
  finished (or the download failed its check), written *before* the outcome is sent, and
  sent again after every restart and reconnection until the server took it.

The record goes once the server took the outcome (or ended the execution itself). The
artifact's partial download lives in `<state_dir>/downloads/<job_id>.part`, renamed
`<job_id>.artifact` once whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge_agent.files import read_json_object, state_folder, write_json

Json = dict[str, Any]


class JobRecords:
    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "jobs"
        self.downloads = state_dir / "downloads"

    def read(self, job_id: str) -> Json:
        return read_json_object(self._path(job_id)) or {}

    def write(self, job_id: str, record: Json) -> None:
        write_json(self._path(job_id), record)

    def with_outcomes(self) -> list[tuple[str, Json]]:
        """The records holding an outcome not yet taken by the server, oldest first."""
        if not self.folder.exists():
            return []
        paths = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        found = [(p.stem, read_json_object(p) or {}) for p in paths]
        return [(job_id, record) for job_id, record in found if "outcome" in record]

    def part(self, job_id: str) -> Path:
        """Where the job's artifact is downloaded (and kept across restarts)."""
        state_folder(self.downloads)
        return self.downloads / f"{_safe(job_id)}.part"

    def artifact(self, job_id: str) -> Path:
        """Where the whole artifact is, once downloaded: the handler is given this path."""
        state_folder(self.downloads)
        return self.downloads / f"{_safe(job_id)}.artifact"

    def forget(self, job_id: str) -> None:
        """The record and the download go: the server has the outcome."""
        self._path(job_id).unlink(missing_ok=True)
        self.part(job_id).unlink(missing_ok=True)
        self.artifact(job_id).unlink(missing_ok=True)

    def _path(self, job_id: str) -> Path:
        state_folder(self.folder)
        return self.folder / f"{_safe(job_id)}.json"


def _safe(job_id: str) -> str:
    """A job ID as a file name: the server's IDs are URL-safe; anything else is refused."""
    if not job_id or not all(c.isalnum() or c in "-_" for c in job_id):
        raise ValueError(f"not a job ID: {job_id!r}")
    return job_id
