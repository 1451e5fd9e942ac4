-- 0025: the live change feed (docs/events.md). One row: how many times the server has
-- started its feed. Each run numbers its events from `runs * 10^12`, so event IDs keep
-- increasing across restarts without a write per event; the window of recent events is
-- held in memory, so an ID of an earlier run asks its client to reload.
CREATE TABLE live_runs (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    runs INTEGER NOT NULL
) STRICT;
INSERT INTO live_runs (id, runs) VALUES (1, 0);
