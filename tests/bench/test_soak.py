"""The soak's verdict and its wrk pacing, and the report's rows (bench/soak.py,
bench/soak_load.py, bench/rows.py): the rules that decide a pass must be able to fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import soak, soak_load
from bench.rows import Row
from bench.servers import free_port


def report(at: float, rss: float, p99: float, errors: int = 0) -> soak.Report:
    return soak.Report(
        at, 400, 2.0, p99, 1, 50, 300, 300, 2, 20, 1, 1, errors, rss, rss, 0.4, 0.1, 5.0
    )


def steady(base_p99: float = 4.0, **change: float) -> list[soak.Report]:
    """Six reports of a 60 s run; `change` adds a per-second slope to rss or p99."""
    return [
        report(t, 100 + change.get("rss", 0) * t, base_p99 + change.get("p99", 0) * t)
        for t in range(10, 70, 10)
    ]


def test_theil_sen_ignores_one_stray_point() -> None:
    points = [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 50.0), (4.0, 5.0)]
    slope, intercept = soak.theil_sen(points)
    assert slope == pytest.approx(1.0)
    assert intercept == pytest.approx(1.0)


def test_a_steady_run_passes() -> None:
    verdict = soak.judge(steady(), 60, [], 0)
    assert verdict.passed, verdict.failures
    assert verdict.rss_growth == pytest.approx(0.0)


def test_growing_rss_fails() -> None:
    verdict = soak.judge(steady(rss=0.5), 60, [], 0)  # +15 MiB on ~115 over the half
    assert not verdict.passed
    assert "RSS grew" in verdict.failures[0]


def test_rss_growth_within_the_limit_passes() -> None:
    assert soak.judge(steady(rss=0.1), 60, [], 0).passed  # +3 MiB on ~103: under 5%


def test_a_climbing_p99_fails_only_past_the_floor() -> None:
    assert not soak.judge(steady(p99=1.0), 60, [], 0).passed  # +30 ms on a 4 ms p99
    # +3 ms on a 1 ms p99: 55% of its median, but under the 5 ms floor
    assert soak.judge(steady(base_p99=1.0, p99=0.1), 60, [], 0).passed
    assert not soak.judge(steady(base_p99=1.0, p99=0.2), 60, [], 0).passed  # +6 ms


def test_any_error_fails() -> None:
    reports = steady()
    reports[1] = report(20, 100, 4.0, errors=1)
    verdict = soak.judge(reports, 60, ["HTTP at 20 s: 1 mix errors, 0 sign-in"], 0)
    assert not verdict.passed
    assert verdict.errors == 1
    assert soak.judge(steady(), 60, ["MQTT: 3 lost"], 3).errors == 3


def test_too_short_a_run_fails() -> None:
    assert not soak.judge(steady()[:1], 60, [], 0).passed


def test_rows_give_ratio_and_verdict() -> None:
    faster = Row("GET", 600, "req/s", "bare", 1000, floor=0.5)
    assert faster.ratio == pytest.approx(0.6) and faster.met is True
    slower = Row("start", 400, "ms", "venv", 200, lower_is_better=True, floor=0.8)
    assert slower.ratio == pytest.approx(0.5) and slower.met is False
    assert Row("errors", 1, "", ceiling=0).met is False
    assert Row("growth", 80, "%", ceiling=50, passed=True).met is True
    assert Row("alone", 5, "ms").met is None


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[str]:
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (make bench-tools)")
    port = free_port()
    command = [sys.executable, "-m", "bench.bare_server", "--port", str(port)]
    process = subprocess.Popen([*command, "--db", str(tmp_path / "bare.db")])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/ok", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_wrk_paces_the_mix_and_counts_errors(bare: str, tmp_path: Path) -> None:
    mix = [
        soak_load.Request(3, "GET", "/ok", "token"),
        soak_load.Request(1, "GET", "/items/missing-%d", "", spread=10),  # 404: errors
    ]
    lua = tmp_path / "mix.lua"
    lua.write_text(soak_load.script(mix, connections=4, rate=100))
    segment = soak_load.finish_wrk(soak_load.start_wrk(bare, lua, 4, 2))
    # paced to 100/s at most (the bare server answers thousands); a busy machine gives less
    assert 20 <= segment.rps <= 110
    assert 0.05 * segment.requests < segment.errors < 0.5 * segment.requests
    assert 0 < segment.p50_ms <= segment.p99_ms
