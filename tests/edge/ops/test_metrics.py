"""edge/ops/metrics.py: what a Prometheus scraper reads: requests by route template (never
by path) and method (unknown ones as OTHER), the sign-in throttle's counters, the database,
files and outbox, the broker's figures only while it runs, and the tunnels."""

from __future__ import annotations

from collections import Counter

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from edge.ops.metrics import Broker, RequestStats, Sources, Tunnels, registry
from tests.edge.rooms import Room


def scrape(sources: Sources) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of one scrape, by name and labels."""
    text = generate_latest(registry(sources)).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def sources(room: Room, **given: object) -> Sources:
    return Sources(
        room.services.db,
        RequestStats(),
        Counter(),
        lambda: Tunnels(*room.services.tunnels.hub.figures()),
        **given,  # type: ignore[arg-type]
    )


async def test_requests_are_counted_by_method_route_and_status(room: Room) -> None:
    made = sources(room)
    made.requests.observe("GET", "/v2/orgs/{org_id}", 200, 0.01)
    made.requests.observe("GET", "/v2/orgs/{org_id}", 200, 0.02)
    made.requests.observe("BREW", "unmatched", 404, 0.001)
    found = scrape(made)
    route = (("method", "GET"), ("route", "/v2/orgs/{org_id}"), ("status", "200"))
    assert found[("edge_http_requests_total", route)] == 2
    assert found[("edge_http_request_duration_seconds_count", route)] == 2
    assert found[("edge_http_request_duration_seconds_sum", route)] == pytest.approx(0.03)
    other = (("method", "OTHER"), ("route", "unmatched"), ("status", "404"))
    assert found[("edge_http_requests_total", other)] == 1


async def test_sign_in_counters_by_factor_and_scope(room: Room) -> None:
    made = sources(room)
    made.sign_in.update({"failed:password": 3, "refused": 2, "locked:acct": 1})
    found = scrape(made)
    assert found[("edge_sign_in_failures_total", (("factor", "password"),))] == 3
    assert found[("edge_sign_in_failures_total", (("factor", "mfa"),))] == 0
    assert found[("edge_sign_in_throttled_total", ())] == 2
    assert found[("edge_sign_in_lockouts_total", (("scope", "account"),))] == 1
    assert found[("edge_sign_in_lockouts_total", (("scope", "pair"),))] == 0


async def test_the_database_files_and_outbox_are_read_at_scrape_time(room: Room) -> None:
    found = scrape(sources(room))
    assert found[("edge_db_writer_queue_depth", ())] == 0
    assert found[("edge_blob_store_bytes", ())] == 0
    assert any(name == "edge_db_size_bytes" and value > 0 for (name, _), value in found.items())
    assert found[("edge_tunnels_connected", ())] == 0
    assert any(name.startswith("process_") for name, _ in found)


async def test_the_brokers_figures_only_while_it_runs(room: Room) -> None:
    assert not any(name.startswith("edge_mqtt") for name, _ in scrape(sources(room)))
    figures = Broker(4, {"connects": 9, "dropped_qos0": 2, "account_queue_refusals": 1})
    found = scrape(sources(room, broker=lambda: figures))
    assert found[("edge_mqtt_connections", ())] == 4
    assert found[("edge_mqtt_connects_total", ())] == 9
    assert found[("edge_mqtt_received_total", ())] == 0
    assert found[("edge_mqtt_dropped_total", (("reason", "qos0"),))] == 2
    assert found[("edge_mqtt_account_refusals_total", (("limit", "queue"),))] == 1
