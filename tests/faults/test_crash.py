"""The crash test, short: a real `edge serve` SIGKILLed a few times under the write storm of
bench/crash.py and started again; every acknowledged write survives, and the checks of the
long run (`make crash-test`) all hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.crash import KINDS, Settings, run

KILLS = 5


@pytest.mark.slow
@pytest.mark.timeout(240)  # about 40 s on an idle machine; the bound only ends a hung run
def test_killed_under_a_write_storm_loses_nothing(tmp_path: Path) -> None:
    report = run(Settings(kills=KILLS, seed=7, up_min=0.3, up_max=1.2, folder=tmp_path))
    assert report.kills == KILLS
    assert report.violations == []
    assert report.lost == []
    assert sum(report.acknowledged.values()) > 0
    assert KINDS <= set(report.acknowledged), report.lines()  # so every check ran
