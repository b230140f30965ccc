"""The prompt pack: numbers from the manifest, the contract from go doc, and
a static prefix that never changes between iterations."""

from __future__ import annotations

import pytest

from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.reflect.prompts import GoDocs, PromptError, PromptPack
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.feedback import ScenarioFeedback

NO_DOCS = GoDocs(contract="", toolkit="")


@pytest.fixture(scope="module")
def manifest(tiny_corpus):
    return load_manifest(tiny_corpus)


def test_static_part_states_the_contract_and_the_manifest_numbers(manifest):
    pack = PromptPack(manifest, degraded=True)
    static = pack.static
    # The exact declarations, from go doc on the Go sources.
    assert "type SimNetworkView interface" in static
    request = "RequestRoute(amt lnwire.MilliSatoshi, inFlightHtlcs uint32) (*route.Route, error)"
    assert request in static
    assert "func NewRouteFromHops(" in static
    # The toolkit's whole API, so that candidates build on it.
    assert "func NewSearcher(g *Graph) *Searcher" in static
    assert "github.com/routesim-evolve/routesim/routekit" in static
    rates = manifest.degraded_attribution()
    assert f"{100 * rates.stripped_rate:.0f}% of failure reports arrive **stripped**" in static
    assert "github.com/routesim-evolve/routesim/routing" in static  # the allow-list
    assert "{{" not in static and "}}" not in static


def test_lnd_types_carry_only_what_a_router_uses(manifest):
    """Of lnd's Route and Hop the prompt quotes the fields a router sets or
    reads here: no blinded paths, custom records, onion encoding or lnd's
    own TODOs, which a model cannot act on."""
    static = PromptPack(manifest).static
    for used in ("TotalTimeLock uint32", "Hops []*Hop", "AmtToForward lnwire.MilliSatoshi",
                 "OutgoingTimeLock uint32", "ChannelID uint64", "func (r *Route) TotalFees()"):
        assert used in static, used
    for noise in ("BlindingPoint", "FirstHopWireCustomRecords", "LegacyPayload", "TODO(",
                  "ToSphinxPath", "PackHopPayload", "EncryptedData"):
        assert noise not in static, noise
    assert "are left out here: the simulator ignores them" in static


def test_dynamic_part_comes_last_and_static_is_stable(manifest, seed_source):
    pack = PromptPack(manifest)
    one = pack.render(seed_source, [feedback("s1", "base", "delivered 3/5")])
    two = pack.render("package main // other", [feedback("s2", "drift", "x")])
    assert one.static == two.static
    assert seed_source.strip()[:200] in one.dynamic and "delivered 3/5" in one.dynamic
    assert "s1 (base)" in one.dynamic and "s2 (drift)" in two.dynamic
    # Without --degraded the prompt neither carries the addendum nor points to it.
    assert "Degraded failure attribution" not in one.static and "addendum" not in one.static
    degraded = PromptPack(manifest, degraded=True).static
    assert "Degraded failure attribution" in degraded and "addendum below" in degraded


def test_degraded_is_refused_without_an_attribution_arena(tmp_path):
    from conftest import make_corpus

    plain = load_manifest(make_corpus(tmp_path / "plain", arenas="base,drift"))
    with pytest.raises(PromptError, match="attribution arena"):
        PromptPack(plain, degraded=True, docs=NO_DOCS)
    assert "drift" in PromptPack(plain, docs=NO_DOCS).static.lower()


def test_lessons_file_bullets_reach_the_background(manifest, tmp_path):
    from routesim_evolve.reflect.prompts import read_lessons

    lessons = tmp_path / "lessons.md"
    lessons.write_text("# Lessons\n\n- Learn across payments:\n  decay what you learned.\n"
                       "- Split by capacity.\n\nprose after\n")
    found = read_lessons(lessons)
    assert found == ["Learn across payments: decay what you learned.", "Split by capacity."]
    static = PromptPack(manifest, lessons=found, docs=NO_DOCS).static
    assert "What earlier champions learned" in static and "- Split by capacity." in static
    assert read_lessons(tmp_path / "none.md") == []


def feedback(scenario: str, arena: str, text: str) -> ScenarioFeedback:
    axes = ScoreAxes(success=0.6, retry_efficiency=0.5, fee_efficiency=0.9)
    return ScenarioFeedback(scenario=scenario, arena=arena, score=axes.score, axes=axes,
                            references={"lnd-apriori": axes}, text=text)


def test_each_model_is_told_one_way_to_hand_its_file_in(manifest, seed_source):
    """A model replies with the file, an agent edits it in place: each prompt
    says its own way once, and never the other's."""
    from routesim_evolve.reflect.cli_backend import agent_instructions

    pack = PromptPack(manifest)
    fb = [feedback("s1", "base", "x")]
    reply = pack.render(seed_source, fb)
    edit = agent_instructions(pack.render(seed_source, fb, hand_in="edit"), eval_script=None)
    reply_text = reply.static + reply.dynamic
    assert reply_text.count("```go block") == 1 and "in place" not in reply_text
    assert "in place" in edit and "```go block" not in edit and "fenced block" not in edit
    assert reply.static == pack.render(seed_source, fb, hand_in="edit").static  # cache-stable


def test_lessons_about_other_arenas_are_left_out(manifest):
    """The tiny corpus has base and attribution: a drift lesson is text the
    model cannot act on there, an attribution one reaches it untagged."""
    from routesim_evolve.reflect.prompts import lessons_for, read_lessons

    lessons = ["General.", "[drift] Forget slowly.", "[attribution] Spread the blame.",
               "[drift, atomic_mpp] Plan rounds."]
    assert lessons_for(lessons, ["base", "attribution"]) == ["General.", "Spread the blame."]
    assert lessons_for(lessons, ["atomic_mpp"]) == ["General.", "Plan rounds."]
    static = PromptPack(manifest, lessons=read_lessons(), docs=NO_DOCS).static
    assert "Forget slowly always" not in static and "[attribution]" not in static
    assert "Trust failure positions" in static


def test_the_bundled_lessons_name_nothing_the_model_cannot_see():
    from routesim_evolve.reflect.prompts import read_lessons

    text = "\n".join(read_lessons())
    for unseen in ("planner.go", "probabilistic.go", "corpus generate", "--seed", "knob ",
                   "compare --", "keptRounds", "mayCarry"):
        assert unseen not in text, unseen


def test_the_prompt_says_what_the_acceptance_saw_of_the_parent(manifest):
    """With a sequential acceptance the model is told the gain, interval and
    evaluations its parent was kept on (evolve/sequential.py account_of)."""
    pack = PromptPack(manifest, docs=NO_DOCS)
    seen = "gain +0.0120 [+0.0041, +0.0199] over 40 scenario evaluations, accepted"
    told = pack.render("package main", [], parent_seen=seen).dynamic
    assert "# What the acceptance saw of this candidate" in told and seen in told
    untold = pack.render("package main", []).dynamic
    assert "What the acceptance saw" not in untold
