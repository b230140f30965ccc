"""When the driver plays the simulator's background traffic on real nodes
(routesim_evolve/realnet/traffic.py): on the simulator's clock, where a payment
starts at its slot or when the one before ended, and each round takes the
attempt latency, its events played between rounds (go/sim/runner.go,
go/sim/payment.go). No node is started: the payment of each event is recorded."""

from __future__ import annotations

import pytest

from routesim_evolve.realnet import traffic as traffic_module
from routesim_evolve.realnet.traffic import RealTraffic
from routesim_evolve.realnet.world import Shift


@pytest.fixture
def paid(monkeypatch) -> list[float]:
    times: list[float] = []

    def record(_world: object, ev: Shift) -> int:
        times.append(ev.at_s)
        return ev.amount_msat

    monkeypatch.setattr(traffic_module, "shift", record)
    return times


def _traffic(*at_s: float) -> RealTraffic:
    events = [Shift(at_s=t, scid="1x2x3", **{"from": "a"}, to="b", amount_msat=1000) for t in at_s]
    return RealTraffic(world=None, events=events, payment_interval_s=5, attempt_latency_s=3)


def test_a_payments_rounds_play_the_traffic_of_their_time(paid) -> None:
    t = _traffic(0.5, 4, 6, 9, 12, 14.5)
    t.before_payment(0)
    assert paid == []
    t.after_round()  # round 0 of payment 0 ends at 3 s
    assert paid == [0.5]
    t.after_round()  # round 1 ends at 6 s, past payment 1's slot (5 s)
    assert paid == [0.5, 4, 6]
    t.before_payment(1)  # starts when payment 0 ended, not at its slot
    assert t.now_s == 6 and paid == [0.5, 4, 6]
    t.after_round(2)  # two rounds at once: lnd's payment, as long as the simulator's took
    assert paid == [0.5, 4, 6, 9, 12]
    t.before_payment(3)  # an idle gap: its slot, 15 s
    assert t.now_s == 15 and paid == [0.5, 4, 6, 9, 12, 14.5]
    assert t.moved == [1000] * 6


def test_a_payment_without_rounds_moves_no_clock(paid) -> None:
    t = _traffic(1, 5, 7)
    t.before_payment(1)
    t.after_round(0)  # the router gave up before any round
    assert paid == [1, 5] and t.now_s == 5
    t.before_payment(2)
    assert paid == [1, 5, 7] and t.now_s == 10
