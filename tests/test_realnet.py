"""Real lnd and btcd on a regtest network (routesim_evolve/realnet): built from
the Go module proxy once (minutes the first time, then cached), three nodes
started on 127.0.0.1, a payment settled by lnd's own SendPaymentV2, a real
failure read back with its code and failing hop, and no process left behind.

The failure is the channel reserve, a rule the simulator plays
(go/sim/rules.go): b holds the amount on its channel to c, but not above its
reserve and fee buffer, so b refuses with temporary_channel_failure, as the
simulator predicts from the same channel state and the old simulator did
not.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from routesim_evolve.corpus.schema import format_scid
from routesim_evolve.realnet.build import real_binaries
from routesim_evolve.realnet.network import LndNode, Regtest
from routesim_evolve.realnet.play import spendable_msat
from routesim_evolve.realnet.rpc import LndClient
from routesim_evolve.realnet.traffic import _pay_direct


@pytest.fixture(scope="module")
def network() -> Iterator[tuple[Regtest, dict[str, LndNode]]]:
    with Regtest(real_binaries(say=print)) as net:
        a, b, c = (net.add_node(n) for n in "abc")
        net.fund()
        net.send_coins(a, [b], 2_000_000)
        net.open_channel(a, b, 3_000_000, 0)  # a can send whatever b can carry
        net.open_channel(b, c, 1_000_000, 300_000)
        net.mine(6)
        net.wait_active(b, 2)
        net.wait_active(a, 1)
        _wait_for_graph(net, a, channels=2)
        yield net, {"a": a, "b": b, "c": c}


def _wait_for_graph(net: Regtest, node: LndNode, channels: int) -> None:
    def full() -> bool:
        edges = node.cli("describegraph").get("edges", [])
        return len(edges) >= channels and all(e.get("node1_policy") and e.get("node2_policy")
                                              for e in edges)
    net._wait(node.name, full, node.process)


def _pay(sender: LndNode, invoice: str, *flags: str) -> dict[str, Any]:
    """lnd's own payment (SendPaymentV2, through lncli payinvoice)."""
    done = subprocess.run([*sender.cli_args(), "payinvoice", "--force", "--json", *flags, invoice],
                          capture_output=True, text=True, timeout=120, check=False)
    return json.loads(done.stdout)


def test_lnd_settles_a_payment_over_two_hops(network) -> None:
    _, nodes = network
    invoice = nodes["c"].cli("addinvoice", "--amt=50000")["payment_request"]
    paid = _pay(nodes["a"], invoice)
    assert paid["status"] == "SUCCEEDED"
    settled = [h for h in paid["htlcs"] if h["status"] == "SUCCEEDED"]
    assert len(settled[0]["route"]["hops"]) == 2


def test_a_forwarding_node_refuses_what_its_reserve_keeps(network) -> None:
    _, nodes = network
    b, c = nodes["b"], nodes["c"]
    (bc,) = [ch for ch in b.cli("listchannels")["channels"] if ch["remote_pubkey"] == c.pubkey]
    local, reserve = int(bc["local_balance"]), int(bc["local_chan_reserve_sat"])
    assert reserve == 10_000  # 1 % of the capacity, as the simulator's rules say
    # Within b's balance, above what it may spend: the old simulator forwarded it.
    amount = local - reserve // 2
    invoice = c.cli("addinvoice", f"--amt={amount}")["payment_request"]
    # One shard: split, lnd would hold parts at c until its MPP timeout.
    paid = _pay(nodes["a"], invoice, "--max_parts=1")
    assert paid["status"] == "FAILED"
    first = paid["htlcs"][0]
    assert first["failure"]["code"] == "TEMPORARY_CHANNEL_FAILURE"
    assert first["failure"]["failure_source_index"] == 1  # b, the route's first hop
    assert first["failure"]["channel_update"]  # with b's channel update, as the rule says


def test_a_funder_spends_to_the_sat_what_the_simulators_rules_say(network) -> None:
    """b funded b–c: what it may spend is its balance with the commitment fee
    added back, less its reserve and the fee buffer over two more HTLCs
    (spendable_msat, the simulator's rule). One sat more is refused at b;
    exactly that settles, as background traffic pays it (traffic.py)."""
    _, nodes = network
    b, c = (LndClient(n.name, n.rpc_address, n.tls_cert, n.macaroon)
            for n in (nodes["b"], nodes["c"]))
    try:
        (bc,) = [ch for ch in b.call(b.ln.ListChannels, b.s.ln.ListChannelsRequest()).channels
                 if ch.remote_pubkey == nodes["c"].pubkey]
        assert bc.initiator
        spend = spendable_msat(b)[format_scid(bc.chan_id)] // 1000 * 1000
        assert spend > 0
        assert not _pay_direct(b, c, bc.remote_pubkey, bc.chan_id, spend + 1000)
        assert _pay_direct(b, c, bc.remote_pubkey, bc.chan_id, spend)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the settled HTLC is off the commitment
            (after,) = [ch for ch in b.call(b.ln.ListChannels, b.s.ln.ListChannelsRequest())
                        .channels if ch.chan_id == bc.chan_id]
            if not after.pending_htlcs:
                break
            time.sleep(0.2)
        assert after.local_balance == bc.local_balance - spend // 1000
    finally:
        b.close()
        c.close()


def test_a_shift_waits_for_its_own_htlc_not_for_a_held_one(network) -> None:
    """The driver plays background traffic between a payment's rounds, while
    the payment's shards are held at the receiver, maybe on the very channel
    a shift pays over. The shift waits until its own HTLC is off the
    commitment, not until the channel holds none: that waited out its 30 s
    on every such shift, and the held shards hit the receiver's MPP timeout.
    Here c pays b over b–c twice: a payment b holds, then a shift."""
    _, nodes = network
    b, c = (LndClient(n.name, n.rpc_address, n.tls_cert, n.macaroon)
            for n in (nodes["b"], nodes["c"]))
    preimage_hash = hashlib.sha256(os.urandom(32)).hexdigest()
    held = nodes["b"].cli("addholdinvoice", preimage_hash, "--amt=20000")["payment_request"]
    payer = subprocess.Popen([*nodes["c"].cli_args(), "payinvoice", "--force", "--json", held],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def channel_to_b() -> Any:
            (cb,) = [ch for ch in c.call(c.ln.ListChannels, c.s.ln.ListChannelsRequest()).channels
                     if ch.remote_pubkey == nodes["b"].pubkey]
            return cb

        deadline = time.monotonic() + 30
        while not (cb := channel_to_b()).pending_htlcs and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cb.pending_htlcs, "the held payment's HTLC is on b–c"
        t0 = time.monotonic()
        assert _pay_direct(c, b, cb.remote_pubkey, cb.chan_id, 10_000_000)
        assert time.monotonic() - t0 < 10
        assert channel_to_b().pending_htlcs, "b still holds the first payment"
    finally:
        nodes["b"].cli("cancelinvoice", preimage_hash)
        payer.wait(timeout=60)
        b.close()
        c.close()


def test_no_process_outlives_the_network() -> None:
    with Regtest(real_binaries()) as net:
        net.add_node("a")
        pids = net.pids()
        root = net.root
    assert len(pids) == 2
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")]
    assert not root.exists()
