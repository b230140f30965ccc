"""The real-node driver reads a served router's routes as untrusted input
(routesim_evolve/realnet/play.py): a malformed or foreign route ends the
payment as an invalid route, without a crash and without anything sent."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import routesim_evolve.realnet.compare as compare
from routesim_evolve.layout import PROJECT_ROOT
from routesim_evolve.realnet.play import PaymentSpec, _Invoice, _PaymentRun

S, T = "02" + "11" * 32, "02" + "55" * 32
GRAPH = {"channels": [{"scid": "101x1x0", "node1": S, "node2": T}]}
SPEC = PaymentSpec(index=0, target=T, amount_msat=1_000_000, fee_limit_msat=10_000, max_parts=4,
                   max_attempts=10, final_cltv_delta=40, cltv_limit_delta=2016)
GOOD_HOP = {"pub_key": T, "scid": "101x1x0", "amt_to_forward_msat": 1_000_000,
            "outgoing_time_lock": 840}


def _run(route: Any) -> _PaymentRun:
    player = SimpleNamespace(source=S, ask=lambda _req, _t: {"route": route})
    inv = _Invoice(r_hash=b"h", payment_addr=b"a", payment_request="lnbc")
    return _PaymentRun(player, SPEC, inv, GRAPH, 800)  # type: ignore[arg-type]


@pytest.mark.parametrize("route", [
    "a route", {"hops": []},
    {"total_time_lock": 840, "total_amount_msat": 1_000_000, "source": S, "hops": []},
    {"total_time_lock": "840", "total_amount_msat": 1_000_000, "source": S, "hops": [GOOD_HOP]},
    {"total_time_lock": 840, "total_amount_msat": 1_000_000, "source": S,
     "hops": [{**GOOD_HOP, "amt_to_forward_msat": -1}]},
    {"total_time_lock": 840, "total_amount_msat": 1_000_000, "source": S,
     "hops": [GOOD_HOP] * 21},
    # Well formed, but over a channel the sender's graph does not have.
    {"total_time_lock": 840, "total_amount_msat": 1_000_000, "source": S,
     "hops": [{**GOOD_HOP, "scid": "999x1x0"}]},
    # Well formed, but paying more fee than the budget.
    {"total_time_lock": 840, "total_amount_msat": 1_020_000, "source": S, "hops": [GOOD_HOP]},
], ids=["not an object", "no fields", "no hops", "a string number", "a negative amount",
        "21 hops", "a foreign channel", "over the fee budget"])
def test_a_bad_route_is_an_invalid_route_and_nothing_is_sent(route: Any) -> None:
    run = _run(route)
    assert run._dispatch() == []
    assert run.reason == "invalid_route"
    assert run.attempts == 0


def test_a_candidate_is_not_played_where_it_would_have_network(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(compare, "network_isolation_available", lambda: False)
    candidate = tmp_path / "candidate.go"
    candidate.write_text("package main\n")
    with pytest.raises(compare.RealnetError, match="without network access"):
        compare.play_router(PROJECT_ROOT / "tests" / "data" / "realnet" / "scenario-5.json",
                            str(candidate), bins=None, say=print)  # type: ignore[arg-type]


def test_a_scenario_real_nodes_cannot_play_is_refused_naming_each_field() -> None:
    from click.testing import CliRunner

    from routesim_evolve.cli import main

    drift = PROJECT_ROOT / "corpus" / "test" / "drift-001.json"
    done = CliRunner().invoke(main, ["realnet", "play", str(drift), "lnd-apriori"])
    assert done.exit_code == 2
    for field in ("gossip.stale_share", "rules.peers.flaky_share", "rules.htlc_slots.busy_share"):
        assert field in done.output, field
    assert "traffic" not in done.output  # played as real payments (traffic.py)
    playable = PROJECT_ROOT / "tests" / "data" / "realnet" / "scenario-5.json"
    from routesim_evolve.corpus.load import load_scenario

    assert compare.unplayable(load_scenario(playable).scenario) == []
