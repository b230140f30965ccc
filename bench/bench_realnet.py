"""Scenarios played on real lnd nodes beside the simulator (issue 43, docs/realnet.md).

Generates small scenarios real nodes can play (12-node synthetic graphs, no
flaky peers, no busy slots, no stale gossip, lnd's regtest commitment fee rate),
one set per arena asked (base; drift and atomic_mpp with their background
traffic, paid for real between other nodes: realnet/traffic.py), then plays
each with every router on
real nodes (`realnet play`: a world of its own per router) and in the
simulator on the same world. Prints per scenario and router the real and
simulated success, attempts and fees, the setup time, the time per payment,
the nodes' peak memory and the changes lnd made to the world; then every
attempt on which the simulator's rules and the real nodes disagree, and one
line:

    realnet: agreement X.X % of N attempts; lnd sim-real success D.DDD [lo, hi];
    champion-lnd real D.DDD [lo, hi]

(agreement over the served routers' attempts, agreement.py; both intervals
are 95 % bootstrap intervals over payments, resampled by scenario, except
that lnd's, when no payment's outcome differs, is ±the exact 95 % upper bound
on the share of payments whose outcome differs, since a bootstrap of
differences that are all 0 is the empty [0, 0]; the line before it gives
that bound always). Slow: about 2 minutes per
world of 12 nodes on 2 cores, about 10 minutes per scenario for 3 routers.

    python bench/bench_realnet.py [--scenarios 1] [--arenas base,drift,atomic_mpp]
                                  [--champion champions/targeted.go] [--no-seed] [--seed N]
                                  [--json OUT]
    python bench/bench_realnet.py --table-from OUT [OUT ...]   # saved runs' table and
                                                               # figures, as far as they went
    python bench/bench_realnet.py --table-from OUT --seed N --scenarios K --parting SCENARIO ROUTER
                                  # where ROUTER's real and simulated plays of SCENARIO part
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from routesim_evolve.build.gomodule import CANDIDATE_SLOT, go_module_dir
from routesim_evolve.layout import CHAMPIONS_DIR, PROJECT_ROOT
from routesim_evolve.realnet.agreement import (
    ARRIVED,
    AgreementRow,
    agreement_share,
    agreement_table,
    format_table,
)
from routesim_evolve.realnet.build import real_binaries
from routesim_evolve.realnet.compare import LND_ROUTERS, RouterPlay, play_router
from routesim_evolve.realnet.network import RealnetError
from routesim_evolve.realnet.play import RealPayment
from routesim_evolve.realnet.world import LND_FEE_FLOOR_SAT_PER_KW, LND_MIN_CLTV_DELTA
from routesim_evolve.score.stats import bootstrap_mean_ci, differ_upper_bound
from routesim_evolve.simulate.reference import reference_result
from routesim_evolve.simulate.run_candidate import run_candidate
from routesim_evolve.simulate.session import SessionError

#: lnd's dust limit, the least reserve it asks (lnwallet.DustLimitForSize).
DUST_LIMIT_SAT = 354


def realnet_settings(seed: int, scenarios: int, arenas: str) -> dict:
    """Generator settings for scenarios real nodes can play."""
    cmd = [sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out", "/dev/null",
           "--seed", str(seed), "--nodes", "12", "--split-sizes", f"0,0,{scenarios}",
           "--arenas", arenas, "--payments", "10,10", "--stale-share", "0",
           "--payment-interval-s", "5", "--sender-min-channels", "3",
           "--sender-min-capacity-sat", "3000000", "--difficulty", "medium", "--print-settings"]
    settings = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True,
                                         cwd=PROJECT_ROOT).stdout)
    for arena in settings["arenas"].values():
        rules = arena["rules"]
        rules["commit_feerate_sat_per_kw"] = LND_FEE_FLOOR_SAT_PER_KW
        rules["peers"]["flaky_share"] = 0.0
        rules["htlc_slots"]["busy_share"] = 0.0
    return settings


def generate(out: Path, seed: int, scenarios: int, arenas: str) -> list[Path]:
    settings = out / "settings.json"
    settings.write_text(json.dumps(realnet_settings(seed, scenarios, arenas)))
    subprocess.run([sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out",
                    str(out / "corpus"), "--settings", str(settings)], check=True,
                   cwd=PROJECT_ROOT, capture_output=True)
    for graph in (out / "corpus" / "graphs").glob("*.json"):
        keep_as_lnd_does(graph)
    return sorted((out / "corpus" / "test").glob("*.json"))


def keep_as_lnd_does(graph: Path) -> None:
    """Write each policy as lnd keeps it, so that the simulator and the real
    nodes play the same policies: a cltv delta of at least lnd's least, a
    maximum HTLC within the channel's max in flight (the capacity less lnd's
    reserve, 1 % or the dust limit)."""
    g = json.loads(graph.read_text())
    for c in g["channels"]:
        cap = c["capacity_sat"]
        in_flight_msat = (cap - max(cap // 100, DUST_LIMIT_SAT)) * 1000
        for end in ("policy1", "policy2"):
            p = c.get(end)
            if p is None:
                continue
            p["cltv_delta"] = max(p["cltv_delta"], LND_MIN_CLTV_DELTA)
            p["htlc_max_msat"] = min(p.get("htlc_max_msat", in_flight_msat), in_flight_msat)
    graph.write_text(json.dumps(g))


def row(scenario: Path, play: RouterPlay) -> str:
    real, sim = play.real, play.sim
    n = len(real)
    real_ok = sum(p.success for p in real)
    sim_ok = sum(p.success for p in sim.payments) if sim else -1
    real_att = sum(p.attempts for p in real) / n
    sim_att = sim.totals.attempts_per_payment if sim else float("nan")
    per_payment = sum(p.seconds for p in real) / n
    return (f"| {scenario.stem} | {play.router} | {n} | {real_ok} | {sim_ok} | {real_att:.2f} | "
            f"{sim_att:.2f} | {sum(p.fee_msat for p in real)} | "
            f"{sim.totals.fee_msat if sim else ''} | {play.setup_s:.0f} | {per_payment:.2f} | "
            f"{play.peak_rss_mib:.0f} | {len(play.traffic_moved)} | {len(play.changes)} |")


def scenario_key(record: dict) -> str:
    """A saved scenario's name across runs: the seed it was generated from
    and its stem (runs saved before the seed was kept give the stem alone)."""
    seed = record.get("seed")
    return record["scenario"] if seed is None else f"seed{seed}/{record['scenario']}"


def closing_lines(saved: list[dict], champion: str) -> list[str]:
    """The run's figures from its saved records (one per scenario and router):
    lnd in the simulator against lnd on real nodes, per arena and over all,
    the champion against lnd on real nodes, and the one closing line."""
    by = {(scenario_key(e), e["router"]): e for e in saved}
    scenarios = sorted({scenario_key(e) for e in saved})
    lnd_gap, champ_lead, champ_lead_sim, clusters_a, clusters_b = [], [], [], [], []
    champ_differ = 0  # payments the champion settled in one telling only
    per_arena: dict[str, list[float]] = {}
    for stem in scenarios:
        lnd, champ = by.get((stem, "lnd-apriori")), by.get((stem, Path(champion).name))
        if lnd is None or champ is None:
            continue  # the run stopped inside this scenario
        real_lnd = [p["success"] for p in lnd["real"]]
        for real, sim in zip(real_lnd, lnd["sim_success"], strict=True):
            lnd_gap.append(float(sim) - float(real))
            clusters_a.append(stem)
            arena = stem.rsplit("/", 1)[-1].rsplit("-", 1)[0]
            per_arena.setdefault(arena, []).append(float(sim) - float(real))
        for mine, theirs in zip((p["success"] for p in champ["real"]), real_lnd, strict=True):
            champ_lead.append(float(mine) - float(theirs))
            clusters_b.append(stem)
        champ_lead_sim += [float(m) - float(t)
                           for m, t in zip(champ["sim_success"], lnd["sim_success"], strict=True)]
        champ_differ += sum(1 for p, s in zip(champ["real"], champ["sim_success"], strict=True)
                            if p["success"] != s)
    if not lnd_gap:
        return ["no scenario was played to its end by both lnd and the champion"]
    lines = [f"{len(lnd_gap)} payments, {len(set(clusters_a))} scenarios"]
    for arena, gaps in sorted(per_arena.items()):
        differ = sum(1 for d in gaps if d != 0)
        lines.append(f"  {arena}: lnd sim and real differ on {differ} of {len(gaps)} payments "
                     f"(sim settled {sum(1 for d in gaps if d > 0)} real did not, real "
                     f"{sum(1 for d in gaps if d < 0)} sim did not; 95 % upper bound on the "
                     f"share that differs {differ_upper_bound(differ, len(gaps)):.3f})")
    boot = bootstrap_mean_ci(lnd_gap, clusters=clusters_a)
    # The interval of the difference is the bootstrap over scenarios; but a
    # bootstrap of differences that are all 0 is the empty [0, 0], so then
    # it is the exact bound on the share of payments whose outcome differs,
    # which bounds the difference either way.
    differ = sum(1 for d in lnd_gap if d != 0)
    bound = differ_upper_bound(differ, len(lnd_gap))
    lnd_interval = (boot[1], boot[2]) if differ else (-bound, bound)
    b = bootstrap_mean_ci(champ_lead, clusters=clusters_b)
    b_sim = bootstrap_mean_ci(champ_lead_sim, clusters=clusters_b)
    played = set(clusters_a)
    rows = [AgreementRow.model_validate(r) for e in by.values() if scenario_key(e) in played
            for r in e["agreement"]]
    lines += [f"lnd sim and real differ on {differ} of {len(lnd_gap)} payments (95 % upper "
              f"bound {bound:.3f}); the bootstrap over scenarios gives {boot[0]:.3f} "
              f"[{boot[1]:.3f}, {boot[2]:.3f}]",
              f"the champion, sim and real, differ on {champ_differ} of {len(champ_lead)} "
              f"payments (95 % upper bound "
              f"{differ_upper_bound(champ_differ, len(champ_lead)):.3f})",
              f"champion-lnd in the simulator on the same payments {b_sim[0]:.3f} "
              f"[{b_sim[1]:.3f}, {b_sim[2]:.3f}]",
              f"realnet: agreement {100 * agreement_share(rows):.1f} % of {len(rows)} attempts; "
              f"lnd sim-real success {boot[0]:.3f} [{lnd_interval[0]:.3f}, {lnd_interval[1]:.3f}]; "
              f"champion-lnd real {b[0]:.3f} [{b[1]:.3f}, {b[2]:.3f}]"]
    return lines


def parting_lines(saved: list[dict], scenario: Path, router: str, seed: int) -> list[str]:
    """Where a router's real and simulated plays of one saved scenario part:
    per payment, how many attempts are alike (amount, hops, arrived or the
    failing position) before the first that is not, and that attempt in each
    telling."""
    found = [e for e in saved if e["scenario"] == scenario.stem
             and e.get("seed", seed) == seed and e["router"] == Path(router).name]
    if len(found) != 1:
        raise ValueError(f"--parting: the saved runs hold {len(found)} plays of {scenario.stem} "
                         f"by {Path(router).name}; give the --table-from file of one run that "
                         "played it")
    (record,) = found
    sim = (reference_result(scenario, router) if router in LND_ROUTERS
           else run_candidate(Path(router).read_text(), scenario).result)
    if sim is None:
        raise ValueError(f"--parting: the simulator gave no result for {router} on {scenario.stem}")
    lines = [f"{scenario.stem} {Path(router).name}: per payment, settled sim/real, attempts "
             "sim/real, attempts alike, then the first unlike in each"]
    for k, (mine, real) in enumerate(zip(sim.payments, record["real"], strict=True)):
        said = [_Attempt(a.round, a.amount_msat, a.hops, a.outcome, a.fail_idx)
                for a in mine.attempt_log]
        seen = [_Attempt(a["round"], a["amount_msat"], len(a["scids"]), a["outcome"],
                         a["failure_index"], "→".join(a["scids"])) for a in real["attempt_log"]]
        # The two logs may differ in length: compare what both have.
        alike = next((i for i, (x, y) in enumerate(zip(said, seen, strict=False))
                      if x.key() != y.key()), min(len(said), len(seen)))
        line = f"  {k}: {mine.success}/{real['success']}, {len(said)}/{len(seen)}, {alike} alike"
        if alike < max(len(said), len(seen)):
            line += (f"; sim {said[alike] if alike < len(said) else 'none'}"
                     f"; real {seen[alike] if alike < len(seen) else 'none'}")
        lines.append(line)
    return lines


@dataclass(frozen=True)
class _Attempt:
    """One attempt as compared between the two tellings."""

    round: int
    amount_msat: int
    hops: int
    outcome: str
    failure_index: int
    channels: str = ""  # the real attempt's channels; the simulator's log keeps none

    def key(self) -> tuple[int, int, bool, int]:
        """What is compared: not the round, which lnd's own payments do not
        show (its attempts are all round 0 on real nodes)."""
        arrived = self.outcome.lower() in ARRIVED
        return (self.amount_msat, self.hops, arrived, -1 if arrived else self.failure_index)

    def __str__(self) -> str:
        over = self.channels or f"{self.hops} hops"
        return (f"round {self.round}, {self.amount_msat} msat over {over}: "
                f"{self.outcome}@{self.failure_index}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=1, help="scenarios per arena")
    parser.add_argument("--arenas", default="base,drift,atomic_mpp")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--champion", default=str(CHAMPIONS_DIR / "targeted.go"))
    parser.add_argument("--json", type=Path, help="write every real payment, its attempts "
                        "and observed rounds, and the agreement table here")
    parser.add_argument("--no-seed", action="store_true",
                        help="play lnd and the champion only (more scenarios in the time)")
    parser.add_argument("--table-from", type=Path, nargs="+", metavar="OUT",
                        help="print the agreement table and the figures of saved --json "
                        "runs, of one --seed or several pooled (as far as they went; a "
                        "scenario saved twice counts once), and stop")
    parser.add_argument("--parting", nargs=2, metavar=("SCENARIO", "ROUTER"),
                        help="with --table-from: where ROUTER's real and simulated plays of "
                        "SCENARIO (e.g. base-003) part, payment by payment; the scenario is "
                        "generated again from --seed, --scenarios and --arenas")
    args = parser.parse_args()
    if args.parting is not None:
        if args.table_from is None:
            parser.error("--parting reads a saved run: give --table-from OUT too")
        records = [e for f in args.table_from for e in json.loads(f.read_text())]
        with tempfile.TemporaryDirectory(prefix="bench-realnet-") as tmp:
            stem, router = args.parting
            paths = {p.stem: p for p in generate(Path(tmp), args.seed, args.scenarios,
                                                  args.arenas)}
            if stem not in paths:
                parser.error(f"--parting: no scenario {stem} at --seed {args.seed} "
                             f"--scenarios {args.scenarios} --arenas {args.arenas}")
            try:
                print("\n".join(parting_lines(records, paths[stem], router, args.seed)))
            except ValueError as exc:
                parser.error(str(exc))
        return
    if args.table_from is not None:
        # Several saves are read as one run; a scenario saved twice counts once.
        kept = {(scenario_key(e), e["router"]): e
                for f in args.table_from for e in json.loads(f.read_text())}
        records = list(kept.values())
        print(format_table(agreement_table(
            RealPayment.model_validate(p) for e in records for p in e["real"])))
        if all("sim_success" in e for e in records):  # saved since the simulator's were kept
            print("\n".join(closing_lines(records, args.champion)))
        return
    bins = real_binaries(say=print)
    seed_router = str(go_module_dir() / CANDIDATE_SLOT)
    routers = ["lnd-apriori", args.champion] if args.no_seed else [
        "lnd-apriori", seed_router, args.champion]
    rows: list[AgreementRow] = []
    saved: list[dict] = []
    failed: list[str] = []
    print("| scenario | router | payments | real settled | sim settled | real attempts/payment | "
          "sim attempts/payment | real fee msat | sim fee msat | setup s | s/payment | "
          "peak MiB | traffic shifts | changes |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-realnet-") as tmp:
        scenarios = generate(Path(tmp), args.seed, args.scenarios, args.arenas)
        for scenario in scenarios:
            plays = {}
            for router in routers:
                t0 = time.monotonic()
                try:
                    plays[router] = play_router(scenario, router, bins, say=lambda _m: None)
                except (RealnetError, SessionError) as exc:
                    # One broken play costs its scenario, not the run.
                    print(f"| {scenario.stem} | {Path(router).name} | not played: "
                          f"{str(exc).splitlines()[0]} |", flush=True)
                    failed.append(f"{scenario.stem} {Path(router).name}: {exc}")
                    break
                print(row(scenario, plays[router]), f"<!-- {time.monotonic() - t0:.0f} s -->",
                      flush=True)
            if len(plays) < len(routers):
                continue
            for play in plays.values():
                rows += play.agreement
                saved.append({"scenario": scenario.stem, "seed": args.seed,
                              "router": play.router,
                              "real": [p.model_dump() for p in play.real],
                              "sim_success": [p.success for p in play.sim.payments]
                              if play.sim else [],
                              "agreement": [r.model_dump() for r in play.agreement]})
            if args.json is not None:  # after each scenario: a crash loses one at most
                args.json.write_text(json.dumps(saved))
    print(f"\n{len(scenarios)} scenarios, {time.monotonic() - started:.0f} s in all")
    print(format_table(rows))
    print("\n".join(closing_lines(saved, args.champion)))
    for what in failed:
        print(f"not played: {what}")


if __name__ == "__main__":
    main()
