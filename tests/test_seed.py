"""Loading the seed: the in-tree router, and a champion written against lnd's
in-tree routing package path."""

from __future__ import annotations

from pathlib import Path

import pytest

from routesim_evolve.evolve.seed import OUR_ROUTING_IMPORT, SeedError, in_tree_seed, load_seed


def test_in_tree_seed_loads_unchanged():
    seed = load_seed()
    assert seed.source == in_tree_seed().read_text() and not seed.notes


def test_lnd_path_champion_is_rewritten_with_a_message(tmp_path: Path):
    old = in_tree_seed().read_text().replace(
        OUR_ROUTING_IMPORT, '"github.com/lightningnetwork/lnd/routing"'
    )
    old = old.replace('"errors"\n', '"errors"\n\tlndr "github.com/lightningnetwork/lnd/routing"\n')
    champion = tmp_path / "champion.go"
    champion.write_text(old)
    seed = load_seed(champion)
    assert "lightningnetwork/lnd/routing\"" not in seed.source
    assert seed.source.count(OUR_ROUTING_IMPORT) == 2
    assert '"github.com/lightningnetwork/lnd/routing/route"' in seed.source
    assert len(seed.notes) == 1 and str(champion) in seed.notes[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [("package other\nfunc newCandidateRouter() {}\n", "package main"),
     ("package main\n", "newCandidateRouter")],
)
def test_unusable_seed_files_say_why(tmp_path: Path, text: str, message: str):
    bad = tmp_path / "bad.go"
    bad.write_text(text)
    with pytest.raises(SeedError, match=message):
        load_seed(bad)


def test_missing_seed_file_is_named(tmp_path: Path):
    with pytest.raises(SeedError, match=r"nowhere\.go"):
        load_seed(tmp_path / "nowhere.go")
