"""The worlds eval and compare play: hidden ones under a fresh secret by
default, named so that the table can be played again; the corpus's own only
when asked, and then said to be replayable; and the replay check, which
flags a candidate that scores more in the corpus's own worlds than in hidden
ones."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from repo_files import SEED_PATH

from routesim_evolve.cli import main
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.report.replay import render_replay_check
from routesim_evolve.score.compare import Comparison, RouterScore, replay_check

SECRET_SAID = re.compile(r"--world-secret ([0-9a-f]{64})")


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def tables(stdout: str) -> str:
    """The tables of an output, without the lines naming the worlds."""
    return "\n".join(line for line in stdout.splitlines() if not line.startswith("Worlds:"))


def test_eval_plays_hidden_worlds_whose_printed_secret_plays_the_table_again(
    tiny_corpus: Path, tmp_path: Path
):
    first = run("eval", "--corpus", tiny_corpus, "--split", "val", "--scenarios",
                "val-base-001", SEED_PATH, "--json", tmp_path / "first.json")
    said = SECRET_SAID.findall(first.stdout)
    assert said and len(set(said)) == 1, first.stdout
    assert "Worlds: hidden, under a fresh secret" in first.stdout
    assert "replayable" not in first.stdout.lower()
    saved = json.loads((tmp_path / "first.json").read_text())
    assert saved["world_secret"] == said[0] and saved["replay_check"] == []

    again = run("eval", "--corpus", tiny_corpus, "--split", "val", "--scenarios",
                "val-base-001", SEED_PATH, "--json", tmp_path / "again.json",
                "--world-secret", said[0])
    assert "Worlds: hidden, under a given secret" in again.stdout
    assert tables(again.stdout) == tables(first.stdout)
    assert json.loads((tmp_path / "again.json").read_text()) == saved

    public = run("eval", "--corpus", tiny_corpus, "--split", "val", "--scenarios",
                 "val-base-001", SEED_PATH, "--json", tmp_path / "public.json",
                 "--world-secret", "public")
    assert tables(public.stdout) != tables(first.stdout)  # other worlds, other scores
    # Said before and after the tables, and on every heading.
    assert public.stdout.count("REPLAYABLE, a candidate that carries the corpus can forge") == 2
    headings = [line for line in public.stdout.splitlines() if line.startswith("## ")]
    assert headings and all("(corpus's own worlds: replayable)" in h for h in headings)
    assert json.loads((tmp_path / "public.json").read_text())["world_secret"] == "public"


def test_the_replay_check_needs_hidden_worlds(tiny_corpus: Path):
    result = CliRunner().invoke(main, ["eval", "--corpus", str(tiny_corpus), str(SEED_PATH),
                                       "--world-secret", "public", "--check-replay"])
    assert result.exit_code == 2
    assert "--check-replay" in result.output and "not public" in result.output


def knows_the_corpus(corpus: Path, split: str) -> str:
    """The seed, playing only in the corpus's own worlds of `split`: it
    carries every payment address there (SHA-256 of the public seed and the
    payment's index, as the simulator derives it) and gives up on any other.
    A candidate carrying the corpus's balances scores more where it knows
    them; this one shows the same signature, larger."""
    addresses = []
    for example in load_examples(corpus, split):
        scenario = json.loads(example.path.read_text())
        for index in range(len(scenario["payments"])):
            digest = hashlib.sha256(int(scenario["seed"]).to_bytes(8, "big")
                                    + index.to_bytes(8, "big")).digest()
            addresses.append("\t{" + ", ".join(f"0x{b:02x}" for b in digest) + "}: true,")
    source = SEED_PATH.read_text()
    assert "\tif r.finished {" in source
    source = source.replace("\tif r.finished {",
                            "\tif r.finished || !corpusWorlds[r.spec.PaymentAddr] {", 1)
    return (source + "\n// corpusWorlds are the payment addresses of the corpus's own worlds.\n"
            "var corpusWorlds = map[[32]byte]bool{\n" + "\n".join(addresses) + "\n}\n")


def test_the_replay_check_flags_a_candidate_that_knows_the_corpus_worlds(
    tiny_corpus: Path, tmp_path: Path
):
    knower = tmp_path / "knower.go"
    knower.write_text(knows_the_corpus(tiny_corpus, "test"))
    out = tmp_path / "check.json"
    result = run("compare", "--corpus", tiny_corpus, "--split", "test", SEED_PATH, knower,
                 "--check-replay", "--world-secret", "ab" * 32, "--json", out,
                 "--html", tmp_path / "check.html")
    assert "## Replay check: the corpus's own worlds minus hidden ones" in result.stdout
    assert "| knower |" in result.stdout.split("## Replay check")[1]
    assert "FLAGGED: knower score(s) more in the corpus's own worlds" in result.stdout
    page = (tmp_path / "check.html").read_text()
    assert "Replay check" in page and "<strong>FLAGGED: may carry the corpus</strong>" in page
    assert f"--world-secret {'ab' * 32}" in page
    checks = {c["router"]: c for c in json.loads(out.read_text())["replay_check"]}
    assert set(checks) == {"candidate_impl", "knower", "lnd-apriori", "lnd-bimodal", "ldk",
                           "oracle"}
    knows = checks["knower"]
    assert knows["flagged"] and not knows["control"]
    assert knows["difference"]["ci_low"] > 0 and knows["difference"]["mean_b"] == 0
    assert knows["beyond_control"]["ci_low"] > 0
    assert knows["beyond_control"]["b"] in {"lnd-apriori", "lnd-bimodal", "ldk", "oracle"}
    # The seed plays alike in both: its difference is the worlds', far below.
    seed = checks["candidate_impl"]["difference"]
    assert abs(seed["mean_diff"]) < knows["difference"]["mean_diff"] / 3
    assert all(checks[r]["control"] and not checks[r]["flagged"]
               for r in ("lnd-apriori", "lnd-bimodal", "ldk", "oracle"))


def scores(router: str, by_scenario: dict[str, float]) -> list[RouterScore]:
    return [RouterScore(router=router, scenario=name, arena="base", status="ok", score=score,
                        success=score, attempts_per_payment=1.0, fee_ppm=0.0)
            for name, score in by_scenario.items()]


def comparison(**routers: dict[str, float]) -> Comparison:
    return Comparison(routers=list(routers), pairs=[],
                      scores=[s for name, got in routers.items() for s in scores(name, got)])


NAMES = [f"s{i}" for i in range(8)]


@pytest.mark.parametrize(("public", "hidden", "flagged"), [
    # Above on every scenario, by more than the scatter: flagged.
    ([0.9, 0.8, 0.85, 0.9, 0.7, 0.95, 0.8, 0.9], [0.5, 0.45, 0.6, 0.5, 0.4, 0.6, 0.5, 0.55],
     True),
    # Up on some, down on others: noise.
    ([0.6, 0.4, 0.7, 0.3, 0.5, 0.6, 0.4, 0.5], [0.5, 0.5, 0.6, 0.4, 0.6, 0.5, 0.5, 0.4], False),
    # Below beyond noise: a candidate the hidden worlds suit, not one that replays.
    ([0.3] * 8, [0.6] * 8, False),
])
def test_a_candidate_is_flagged_only_above_beyond_noise(public: list[float],
                                                        hidden: list[float], flagged: bool):
    steady = dict(zip(NAMES, [0.5] * 8, strict=True))
    checks = replay_check(
        comparison(mine=dict(zip(NAMES, public, strict=True)), **{"lnd-apriori": steady}),
        comparison(mine=dict(zip(NAMES, hidden, strict=True)), **{"lnd-apriori": steady}),
        candidates={"mine"})
    mine, lnd = checks
    assert (mine.router, mine.flagged, mine.control) == ("mine", flagged, False)
    assert (lnd.router, lnd.flagged, lnd.control) == ("lnd-apriori", False, True)
    assert mine.difference.mean_diff == pytest.approx(
        sum(public) / 8 - sum(hidden) / 8)
    assert (mine.difference.ci_low > 0) is flagged
    text = render_replay_check(checks)
    assert ("FLAGGED: mine" in text) is flagged
    assert "| lnd-apriori | 0.5000 | 0.5000 | +0.0000 |" in text and "control" in text


def test_a_candidate_moved_as_much_as_the_control_is_not_flagged():
    """The corpus's own worlds can suit every router better than hidden ones
    (its payments were sized there): a candidate whose difference is the
    control's, however far above 0, is not flagged; one beyond it is."""
    hidden = [0.5, 0.45, 0.6, 0.5, 0.4, 0.6, 0.5, 0.55]
    public = [h + 0.1 for h in hidden]
    shifted = [p + (0.02 if i % 2 else -0.02) for i, p in enumerate(public)]
    replayer = [p + 0.2 for p in public]
    both = {"seed": shifted, "replayer": replayer, "ldk": public,
            "lnd-apriori": hidden}
    checks = {c.router: c for c in replay_check(
        comparison(**{r: dict(zip(NAMES, got, strict=True)) for r, got in both.items()}),
        comparison(**{r: dict(zip(NAMES, hidden, strict=True)) for r in both}),
        candidates={"seed", "replayer"})}
    seed, replayer_check = checks["seed"], checks["replayer"]
    assert seed.difference.ci_low > 0  # above 0 beyond noise ...
    assert seed.beyond_control is not None and seed.beyond_control.b == "ldk"
    assert not seed.flagged  # ... but no more than the control
    assert replayer_check.flagged and replayer_check.beyond_control is not None
    assert replayer_check.beyond_control.mean_diff == pytest.approx(0.2)
    text = render_replay_check(list(checks.values()))
    assert "control (the largest difference)" in text and "FLAGGED: replayer" in text


def test_a_reference_above_beyond_noise_is_a_control_not_a_flag():
    """The references carry no corpus: a reference above in the corpus's own
    worlds says the worlds differ, and the table says so."""
    up = dict(zip(NAMES, [0.9] * 8, strict=True))
    down = dict(zip(NAMES, [0.6, 0.5, 0.6, 0.55, 0.5, 0.6, 0.5, 0.6], strict=True))
    checks = replay_check(comparison(oracle=up), comparison(oracle=down), candidates=set())
    assert checks[0].control and not checks[0].flagged and checks[0].difference.ci_low > 0
    assert "control (the largest difference)" in render_replay_check(checks)


def test_one_scenario_flags_nothing():
    """One scenario has no noise to measure: however far above, no flag."""
    checks = replay_check(comparison(mine={"s0": 0.9}), comparison(mine={"s0": 0.1}),
                          candidates={"mine"})
    assert not checks[0].flagged and checks[0].difference.mean_diff == pytest.approx(0.8)
    assert "no verdict: one scenario" in render_replay_check(checks)
