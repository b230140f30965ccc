"""A candidate served in the sandbox (simulate/session.py, `routesim --serve`): it
answers the driver line by line, and whatever ends the session (a request that is
not the protocol's, a process that exits) becomes a SessionError naming it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from routesim_evolve.build.cache import build_candidate
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, go_module_dir
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS
from routesim_evolve.simulate.session import (
    MAX_ANSWER_BYTES,
    ServedProcess,
    SessionError,
    _lines,
)

GRAPH = Path(__file__).parent / "data" / "realnet" / "graph-5.json"
S, T = "02" + "11" * 32, "02" + "55" * 32


@pytest.fixture(scope="module")
def binary() -> Path:
    build = build_candidate((go_module_dir() / CANDIDATE_SLOT).read_text())
    assert build.ok and build.binary is not None, build.message
    return build.binary


def _begin() -> dict:
    graph = json.loads(GRAPH.read_text())
    return {"begin": {"graph": graph, "unix_time": 1_767_225_600, "block_height": 800_000,
                      "source": S, "local_balances_msat": {"101x1x0": 700_000_000,
                                                           "102x1x0": 700_000_000,
                                                           "103x1x0": 700_000_000},
                      "payment": {"index": 0, "target": T, "amount_msat": 50_000_000,
                                  "fee_limit_msat": 510_000, "max_parts": 16,
                                  "max_attempts": 40, "final_cltv_delta": 40,
                                  "cltv_limit": 802_016, "atomic": True,
                                  "payment_addr": "ab" * 32}}}


def test_the_seed_router_answers_with_a_route_to_the_target(binary, tmp_path) -> None:
    with ServedProcess(binary, ["--serve"], DEFAULT_LIMITS, tmp_path) as served:
        assert served.ask(_begin(), 30) == {"ok": True}
        answer = served.ask({"request": {"amount_msat": 50_000_000, "in_flight": 0}}, 30)
        route = answer["route"]
        assert route["source"] == S and route["hops"][-1]["pub_key"] == T
        assert route["hops"][-1]["amt_to_forward_msat"] <= 50_000_000
        assert served.ask({"end": {"success": False, "delivered_msat": 0, "fees_msat": 0,
                                   "released": False}}, 30) == {"ok": True}


def test_a_request_outside_the_protocol_ends_the_session(binary, tmp_path) -> None:
    with ServedProcess(binary, ["--serve"], DEFAULT_LIMITS, tmp_path) as served:
        answer = served.ask({"request": {"amount_msat": 1, "in_flight": 0}}, 30)
        assert "no payment begun" in answer["error"]
        with pytest.raises(SessionError, match="exit code 2"):
            served.ask(_begin(), 30)


def test_an_overlong_answer_line_is_cut() -> None:
    stream = io.BufferedReader(io.BytesIO(
        b"x" * (MAX_ANSWER_BYTES + 10) + b"\n" + b"y" * MAX_ANSWER_BYTES + b"\n{}\n"))
    lines = list(_lines(stream))
    assert [len(x) for x in lines] == [MAX_ANSWER_BYTES, MAX_ANSWER_BYTES, 2]
    assert lines[1] == b"y" * MAX_ANSWER_BYTES and lines[2] == b"{}"
