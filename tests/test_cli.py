"""The eval and compare commands, and the errors a user meets first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_files import SEED_PATH

from routesim_evolve.cli import main


def test_eval_prints_candidate_beside_lnd_and_writes_json(tiny_corpus: Path, tmp_path: Path):
    out = tmp_path / "eval.json"
    res = CliRunner().invoke(main, ["eval", "--corpus", str(tiny_corpus), "--split", "val",
                                    str(SEED_PATH), "--json", str(out)])
    assert res.exit_code == 0, res.output
    for router in ("candidate_impl", "lnd-apriori", "lnd-bimodal", "ldk", "oracle"):
        assert f"| {router} |" in res.output
    assert "| base |" in res.output and "| attribution |" in res.output
    data = json.loads(out.read_text())
    assert {s["router"] for s in data["scores"]} == {
        "candidate_impl", "lnd-apriori", "lnd-bimodal", "ldk", "oracle"}
    assert "headroom captured" in res.output
    assert all(0.0 <= s["score"] <= 1.0 for s in data["scores"])
    # Each scenario's terms sum to its score, and the distance table shows them.
    for s in data["scores"]:
        assert sum(s["terms"].values()) == pytest.approx(s["score"])
    assert "## Distance to the oracle, by score axis" in res.output
    assert "| all | candidate_impl |" in res.output.split("## Distance to the oracle")[1]


def test_compare_pairs_two_candidates_with_revalidation(tiny_corpus: Path, tmp_path: Path):
    variant = tmp_path / "variant.go"
    variant.write_text(SEED_PATH.read_text().replace("maxHops = 20", "maxHops = 3"))
    res = CliRunner().invoke(main, ["compare", "--corpus", str(tiny_corpus), str(SEED_PATH),
                                    str(variant), "--revalidate", "1"])
    assert res.exit_code == 0, res.output
    assert "| candidate_impl | variant |" in res.output
    assert "| candidate_impl | lnd-apriori |" in res.output
    # 2 test scenarios, each with one reseeded copy: 4 pairs of 2 scenarios.
    assert "| candidate_impl | variant | 4 (2) |" in res.output


def test_degraded_needs_an_attribution_arena(tmp_path: Path):
    from conftest import make_corpus

    corpus = make_corpus(tmp_path / "plain", arenas="base")
    res = CliRunner().invoke(main, ["--corpus", str(corpus), "--degraded"])
    assert res.exit_code != 0
    assert "--degraded needs a corpus with an attribution arena" in res.output


def test_bad_reflection_lm_is_named(tiny_corpus: Path):
    res = CliRunner().invoke(main, ["--corpus", str(tiny_corpus), "--reflection-lm", "gpt:x"])
    assert res.exit_code != 0 and "gpt:x" in res.output


def test_missing_corpus_is_required():
    res = CliRunner().invoke(main, [])
    assert res.exit_code != 0 and "--corpus is required" in res.output


def test_malformed_corpus_file_names_file_and_field(tiny_corpus: Path, tmp_path: Path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(tiny_corpus, broken)
    victim = next((broken / "val").glob("*.json"))
    data = json.loads(victim.read_text())
    data["payments"][0]["amount_msat"] = -5
    victim.write_text(json.dumps(data))
    res = CliRunner().invoke(main, ["eval", "--corpus", str(broken), str(SEED_PATH)])
    assert res.exit_code != 0
    assert victim.name in res.output and "payments[0].amount_msat" in res.output
