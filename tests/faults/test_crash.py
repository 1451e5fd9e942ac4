"""The crash test, short: a real `edge serve` SIGKILLed a few times under the write storm of
bench/crash.py and started again; every acknowledged write survives, and the checks of the
long run (`make crash-test`) all hold. `make test` kills it twice (once with a restart under
the storm after it), `make test-long` five times."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.crash import KINDS, Settings, run

KILLS = 5  # make test-long
EVERYDAY = 2  # make test: a kill, a restart under the storm, and the last kill; every check


@pytest.mark.slow
@pytest.mark.parametrize(
    "kills",
    [
        pytest.param(EVERYDAY, id="everyday"),
        pytest.param(KILLS, marks=pytest.mark.long, id="long"),
    ],
)
@pytest.mark.timeout(240)  # about 40 s on an idle machine; the bound only ends a hung run
def test_killed_under_a_write_storm_loses_nothing(tmp_path: Path, kills: int) -> None:
    report = run(Settings(kills=kills, seed=7, up_min=0.3, up_max=1.2, folder=tmp_path))
    assert report.kills == kills
    assert report.violations == []
    assert report.lost == []
    assert sum(report.acknowledged.values()) > 0
    assert KINDS <= set(report.acknowledged), report.lines()  # so every check ran
