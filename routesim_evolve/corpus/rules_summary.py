"""The rules real nodes enforce that a table's scenarios played, in words.

A figure measured on the simulator means little without the rules it played
(reserves, fee buffers, HTLC slots, flaky peers, shards held until the whole
amount arrived: docs/scenario-format.md, "The rules real nodes enforce"), so
every comparison records them (score/compare.py) and every compare, eval and
report says them beside its tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from routesim_evolve.corpus.schema import Rules, Scenario


def rules_line(scenarios: Iterable[Scenario]) -> str:
    """One line: each distinct rules block of the scenarios with how many
    play it, and how many hold shards until the whole amount arrived."""
    played = list(scenarios)
    blocks = Counter(_describe(s.rules) for s in played)
    held = sum(s.atomic_mpp for s in played)
    parts = [text if len(blocks) == 1 else f"{n} of {len(played)} scenarios: {text}"
             for text, n in sorted(blocks.items())]
    return (f"Rules real nodes enforce: {'; '.join(parts)}. Shards held until the whole "
            f"amount arrived in {held} of {len(played)} scenarios.")


def _describe(rules: Rules | None) -> str:
    if rules is None:
        return "none (scenarios without a rules block: the simulator before them)"
    said = []
    if rules.reserve_share:
        said.append(f"reserves {rules.reserve_share:.0%} (at least {rules.dust_limit_sat} sat)")
    if rules.commit_feerate_sat_per_kw or rules.anchors_sat:
        said.append(f"the funder's fee buffer at {rules.commit_feerate_sat_per_kw:,} sat/kw and "
                    f"{rules.anchors_sat} sat of anchors")
    slots = rules.htlc_slots
    if slots.large_limit:
        said.append(f"HTLC slots {slots.large_limit} ({slots.small_limit} for "
                    f"{slots.small_share:.0%} of nodes), {slots.busy_share:.0%} of directions "
                    f"busy with {slots.busy_htlcs_min}–{slots.busy_htlcs_max} HTLCs of others")
    peers = rules.peers
    if peers.flaky_share:
        said.append(f"{peers.flaky_share:.0%} of nodes flaky (online {peers.online_mean_s:,.0f} s, "
                    f"offline {peers.offline_mean_s:,.0f} s on average)")
    return ", ".join(said) or "a rules block with every rule off"
