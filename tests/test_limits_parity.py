"""One hop limit and one fee-limit formula: the Python side checks results
by the limits Go enforces, read from docs/examples/limits.json, which a Go
test writes from Go's own definitions (go/scenario/limits_test.go)."""

from __future__ import annotations

import json

from repo_files import REPO

from routesim_evolve.corpus.schema import HtlcSlots, Payment, PaymentDefaults
from routesim_evolve.corpus.settings import MPP_TIMEOUT_S
from routesim_evolve.score.invariants import MAX_ROUTE_HOPS
from routesim_evolve.simulate.result_format import AttemptRecord

LIMITS = json.loads((REPO / "docs" / "examples" / "limits.json").read_text())


def test_one_hop_limit():
    assert LIMITS["max_route_hops"] == MAX_ROUTE_HOPS


def test_one_slot_ceiling_and_one_mpp_timeout():
    """BOLT 02's max_accepted_htlcs ceiling bounds the rules' slot limits, and
    lnd's MPP timeout bounds the generator's held rounds, as Go validates."""
    for name in ("large_limit", "small_limit"):
        assert any(getattr(m, "le", None) == LIMITS["max_accepted_htlcs"]
                   for m in HtlcSlots.model_fields[name].metadata)
    assert LIMITS["mpp_timeout_s"] == MPP_TIMEOUT_S


def test_one_route_label_limit():
    field = AttemptRecord.model_fields["label"]
    assert any(getattr(m, "max_length", None) == LIMITS["max_route_label_bytes"]
               for m in field.metadata)


def test_one_fee_limit_formula():
    assert len(LIMITS["fee_limits"]) >= 5
    for case in LIMITS["fee_limits"]:
        payment = Payment(amount_msat=case["amount_msat"],
                          fee_limit_msat=case.get("fee_limit_msat"))
        defaults = PaymentDefaults(fee_limit_ppm=case["fee_limit_ppm"],
                                   fee_limit_base_msat=case["fee_limit_base_msat"])
        assert payment.fee_limit(defaults) == case["want_msat"], case
