"""Hidden worlds: what the harness plays is drawn from a secret, never from
the corpus's public seed alone, and payments sized by their share of what
the network holds keep that share in the hidden world."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from repo_files import REPO

from routesim_evolve.corpus.difficulty import starting_flows
from routesim_evolve.corpus.examples import load_examples, reseeded
from routesim_evolve.corpus.worlds import (
    PUBLIC,
    SECRET_FILE,
    SHARE_SPREAD,
    WorldSecret,
    played_examples,
    resolve,
    resolve_run,
    run_secret,
)

BUNDLED = REPO / "corpus"


def test_secrets_parse_and_refuse_what_is_not_one():
    assert WorldSecret.parse("public") is PUBLIC and PUBLIC.public
    fresh, other = WorldSecret.parse("random"), WorldSecret.parse("random")
    assert not fresh.public and fresh.key != other.key
    assert WorldSecret.parse(fresh.key.hex()) == fresh
    for bad in ("", "12ab", "zz" * 32, "ab" * 31):
        with pytest.raises(ValueError, match="public, random or 64 hex digits"):
            WorldSecret.parse(bad)


def test_a_hidden_seed_is_the_secrets_alone():
    a, b = WorldSecret(key=b"a" * 32), WorldSecret(key=b"b" * 32)
    seeds = {a.hidden_seed("base-001", 7), b.hidden_seed("base-001", 7),
             a.hidden_seed("base-002", 7), a.hidden_seed("base-001", 8)}
    assert len(seeds) == 4 and 7 not in seeds and all(0 <= s < 2**63 for s in seeds)
    assert a.hidden_seed("base-001", 7) == a.hidden_seed("base-001", 7)
    assert PUBLIC.hidden_seed("base-001", 7) == 7


def test_resolved_scenarios_play_other_worlds_sized_by_their_share(tmp_path: Path):
    """The bundled test scenarios under a secret: new seeds, the graph found
    from anywhere, and each payment its hidden share (the public one scaled
    under the secret) of the hidden world's flow."""
    examples = load_examples(BUNDLED, "test")[:4]
    secret = WorldSecret(key=bytes(range(32)))
    played = resolve(examples, secret, tmp_path)
    assert [p.name for p in played] == [e.name for e in examples]
    public_flows = starting_flows([e.path for e in examples])
    hidden_flows = starting_flows([p.path for p in played])
    for ex, hidden, flows, before in zip(examples, played, hidden_flows, public_flows,
                                         strict=True):
        public, data = json.loads(ex.path.read_text()), json.loads(hidden.path.read_text())
        assert hidden.path.parent.parent == tmp_path and Path(data["graph"]).is_absolute()
        assert data["seed"] == secret.hidden_seed(public["name"], public["seed"])
        assert hidden.content_hash != ex.content_hash
        assert flows != before  # another draw of the balances
        for index, (pay, flow, shown) in enumerate(zip(data["payments"], flows,
                                                       public["payments"], strict=True)):
            share = secret.hidden_share(public["name"], index, shown["amount_share"])
            assert pay["amount_share"] == share != shown["amount_share"]
            assert pay["amount_msat"] == max(int(share * flow) // 1000, 1) * 1000


def test_the_public_share_does_not_decode_the_hidden_flow(tmp_path: Path):
    """Sized at the public share, amount / share was the hidden world's max
    flow to the target, handed to the candidate as the amount to pay. Sized
    under the secret it is a factor off, one that varies from payment to
    payment and stays within SHARE_SPREAD; the same secret sizes the same."""
    examples = load_examples(BUNDLED, "val")
    secret = WorldSecret(key=b"s" * 32)
    played = resolve(examples, secret, tmp_path / "first")
    again = resolve(examples, secret, tmp_path / "again")
    other = resolve(examples, WorldSecret(key=b"t" * 32), tmp_path / "other")
    assert [p.path.read_bytes() for p in played] == [a.path.read_bytes() for a in again]
    ratios, eased, cut_off = [], [], 0
    for ex, hidden, flows in zip(examples, played, starting_flows([p.path for p in played]),
                                 strict=True):
        public = json.loads(ex.path.read_text())["payments"]
        for shown, pay, flow in zip(public, json.loads(hidden.path.read_text())["payments"],
                                    flows, strict=True):
            if flow == 0:
                # The target is cut off at the start (a flaky peer offline, a
                # full slot): the payment is sized at the 1-sat floor.
                assert pay["amount_msat"] == 1000
                cut_off += 1
                continue
            ratios.append(pay["amount_msat"] / shown["amount_share"] / flow)
            eased.append(pay["amount_share"] / shown["amount_share"])
            assert 0 < pay["amount_msat"] <= flow
    assert len(ratios) > 20 and cut_off < len(ratios) / 10
    # amount / public share recovers the flow for almost no payment ...
    assert sum(abs(r - 1) < 0.01 for r in ratios) < len(ratios) / 10, ratios
    # ... but only ever a factor within the spread, in both directions.
    assert all(1 / SHARE_SPREAD - 0.01 < r < SHARE_SPREAD for r in ratios)
    assert min(ratios) < 0.8 and max(ratios) > 1.2
    # The difficulty holds on the whole: the mean share moves by under 15 %.
    assert 0.85 < sum(eased) / len(eased) < 1.15
    assert [o.path.read_bytes() for o in other] != [p.path.read_bytes() for p in played]


def test_public_worlds_are_the_corpus_own(tmp_path: Path):
    examples = load_examples(BUNDLED, "val")
    assert resolve(examples, PUBLIC, tmp_path) == examples
    assert not any(tmp_path.iterdir())


def test_reseeded_copies_are_hidden_too(tiny_corpus: Path, tmp_path: Path):
    copies = reseeded(load_examples(tiny_corpus, "val"), 2, tmp_path / "copies")
    secret = WorldSecret.fresh()
    played = resolve(copies, secret, tmp_path / "worlds")
    seeds = [json.loads(p.path.read_text())["seed"] for p in played]
    publics = [json.loads(c.path.read_text())["seed"] for c in copies]
    assert len(set(seeds)) == len(seeds) and not set(seeds) & set(publics)


def test_a_run_keeps_its_secret_private_and_plays_it_again(tiny_corpus: Path, tmp_path: Path):
    first = run_secret(tmp_path)
    assert stat.S_IMODE((tmp_path / SECRET_FILE).stat().st_mode) == 0o600
    assert run_secret(tmp_path) == first  # a resume
    train = load_examples(tiny_corpus, "train")
    played = resolve_run(tmp_path, train, run_secret(tmp_path))
    again = played_examples(tmp_path, "train")
    assert again == played and played != train


def test_an_unknown_secret_is_refused_in_one_line(tmp_path: Path):
    from click.testing import CliRunner

    from routesim_evolve.cli import main

    result = CliRunner().invoke(main, ["compare", "--corpus", str(BUNDLED),
                                       "--world-secret", "nope", str(REPO / "champions" /
                                                                     "planner.go")])
    assert result.exit_code == 2
    assert "--world-secret" in result.output and "64 hex digits" in result.output


def test_a_run_resumed_with_another_secret_is_refused(tmp_path: Path):
    from routesim_evolve.corpus.worlds import WorldsChanged

    chosen = WorldSecret(key=b"k" * 32)
    assert run_secret(tmp_path, chosen) == chosen
    assert run_secret(tmp_path) == chosen and run_secret(tmp_path, chosen) == chosen
    with pytest.raises(WorldsChanged, match="another --world-secret"):
        run_secret(tmp_path, WorldSecret(key=b"j" * 32))
    public = tmp_path / "public"
    public.mkdir()
    assert run_secret(public, PUBLIC).public and run_secret(public).public


def test_a_damaged_secret_stops_the_resume_naming_it(tmp_path: Path):
    from routesim_evolve.corpus.worlds import WorldsChanged

    (tmp_path / SECRET_FILE).write_text("not hex")
    with pytest.raises(WorldsChanged, match=r"world\.key: not a world secret"):
        run_secret(tmp_path)


def test_a_runs_secret_is_parsed_once_into_its_settings_and_never_written() -> None:
    """The run's --world-secret is a WorldSecret from the edge on: the
    driver takes it as it is, and settings.json never holds it."""
    import pydantic

    from routesim_evolve.runs.settings import EvolveSettings

    given = "ab" * 32
    settings = EvolveSettings(corpus=Path("c"), run_dir=Path("r"), world_secret=given)
    assert settings.world_secret == WorldSecret.parse(given)
    assert given not in settings.model_dump_json()
    with pytest.raises(pydantic.ValidationError, match="give public, random or 64 hex"):
        EvolveSettings(corpus=Path("c"), run_dir=Path("r"), world_secret="abc")
