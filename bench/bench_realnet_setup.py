"""How long a regtest network of real nodes takes to come up, and what a real
payment on it takes: the part of issue 43 built so far (docs/realnet.md).

Starts btcd and three lnd nodes (a, b, c) on 127.0.0.1, funds a, opens a→b and
b→c, waits until a's graph holds both channels with both policies, and has a
pay c with lnd's own SendPaymentV2. Prints the time to each step and the
lnd processes' peak memory. Builds real lnd and btcd first if the cache lacks
them (minutes, once).

    python bench/bench_realnet_setup.py
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from routesim_evolve.realnet.build import real_binaries
from routesim_evolve.realnet.network import LndNode, Regtest


def peak_rss_mib(pid: int) -> float:
    """VmHWM of a running process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def graph_holds(node: LndNode, channels: int) -> bool:
    edges = node.cli("describegraph").get("edges", [])
    return len(edges) >= channels and all(e.get("node1_policy") and e.get("node2_policy")
                                          for e in edges)


def main() -> None:
    bins = real_binaries(say=print)
    start = time.monotonic()
    marks: list[tuple[str, float]] = []

    def mark(step: str) -> None:
        marks.append((step, time.monotonic() - start))

    with Regtest(bins) as net:
        a, b, c = (net.add_node(n) for n in "abc")
        mark("three nodes answer")
        net.fund()
        net.send_coins(a, [b], 2_000_000)
        mark("funded")
        net.open_channel(a, b, 3_000_000, 0)
        net.open_channel(b, c, 1_000_000, 300_000)
        net.mine(6)
        net.wait_active(b, 2)
        net.wait_active(a, 1)
        mark("channels active")
        net._wait(a.name, lambda: graph_holds(a, 2), a.process)
        mark("a's graph holds both channels")
        invoice = c.cli("addinvoice", "--amt=50000")["payment_request"]
        paid_at = time.monotonic()
        done = subprocess.run([*a.cli_args(), "payinvoice", "--force", "--json", invoice],
                              capture_output=True, text=True, timeout=120, check=True)
        status = json.loads(done.stdout)["status"]
        payment_s = time.monotonic() - paid_at
        rss = [peak_rss_mib(n.process.popen.pid) for n in (a, b, c) if n.process.popen]
    for step, seconds in marks:
        print(f"{step}: {seconds:.1f} s")
    print(f"payment over two hops ({status}): {payment_s:.2f} s")
    print(f"lnd peak memory: {min(rss):.0f}–{max(rss):.0f} MiB per node")


if __name__ == "__main__":
    main()
