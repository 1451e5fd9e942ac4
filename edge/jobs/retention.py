"""How long ended jobs are kept (docs/jobs.md, "Retention"): a job COMPLETED, CANCELED or
ABORTED more than `jobs_retention_days` ago is deleted with its executions, its counts and
its targets by the hourly sweep (edge/app.py).

The sweep deletes in batches, each its own write transaction on the writer thread (off
the event loop), so a job over 10,000 devices never holds the writer for one long
transaction and other writes go between the batches. Running jobs are never touched: a
continuous job is kept until it is canceled, and then for the retention period.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from edge.kernel import clock
from storage import jobs as store
from storage.database import Database
from storage.rows import Tx

log = logging.getLogger("edge.jobs")
JOBS_PER_BATCH = 100
EXECUTIONS_PER_BATCH = 2000


class Retention:
    def __init__(self, db: Database, days: int) -> None:
        self._db = db
        self.kept = timedelta(days=days)

    async def sweep(self) -> int:
        """Delete what has been ended for longer than the retention period, a batch per
        transaction; how many rows (jobs and executions) went."""
        before = clock.iso(clock.now() - self.kept)

        def batch(conn: Tx) -> int:
            return store.purge_ended(conn, before, JOBS_PER_BATCH, EXECUTIONS_PER_BATCH)

        removed = 0
        while gone := await self._db.write(batch):
            removed += gone
        if removed:
            log.info("jobs: the retention sweep deleted %d ended jobs' rows", removed)
        return removed
