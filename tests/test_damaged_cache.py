"""A half-written or corrupted cache entry (evaluation, reference result,
a binary without its checksum) is detected and rebuilt, never trusted; a
binary whose bytes changed stops the run (tests/test_trusted_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import routesim_evolve.build.trusted as trusted
from routesim_evolve.build.cache import BinaryCache
from routesim_evolve.build.trusted import TrustedFileChanged, forget_tampering, sidecar
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.reference import ReferenceCache


def test_a_truncated_evaluation_is_evaluated_again(tiny_corpus: Path, seed_source: str,
                                                   tmp_path: Path):
    example = load_examples(tiny_corpus, "val")[0]
    evaluator = Evaluator(ReferenceResults(), cache_dir=tmp_path)
    first = evaluator.evaluate(seed_source, example)
    [entry] = list(tmp_path.glob("*/*.json"))
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    again = Evaluator(ReferenceResults(), cache_dir=tmp_path).evaluate(seed_source, example)
    assert again == first
    assert entry.read_bytes() == again.model_dump_json().encode()


def test_a_corrupted_binary_stops_the_run(seed_source: str, tmp_path: Path):
    cache = BinaryCache(root=tmp_path)
    source = seed_source + "\nconst damagedCacheMarker = 1\n"
    built = cache.build(source)
    assert built.ok and built.binary is not None
    built.binary.chmod(0o755)  # built read-only
    built.binary.write_bytes(b"\x7fELF not really")
    try:
        with pytest.raises(TrustedFileChanged, match="delete the cache folder"):
            BinaryCache(root=tmp_path).build(source)
    finally:
        forget_tampering()


def test_a_binary_without_its_checksum_is_rebuilt(seed_source: str, tmp_path: Path):
    cache = BinaryCache(root=tmp_path)
    source = seed_source + "\nconst damagedCacheMarker = 2\n"
    built = cache.build(source)
    assert built.ok and built.binary is not None
    sidecar(built.binary).unlink()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trusted, "_expected", {})  # a new process: only the sidecar
        rebuilt = BinaryCache(root=tmp_path).build(source)
    assert rebuilt.ok and rebuilt.compiled
    assert sidecar(built.binary).is_file()


def test_a_damaged_reference_result_is_run_again(tiny_corpus: Path, tmp_path: Path):
    example = load_examples(tiny_corpus, "val")[0]
    refs = ReferenceCache(root=tmp_path)
    first = refs.result(example.path, "lnd-apriori")
    [entry] = list((tmp_path / "reference").glob("*/*.json"))
    entry.write_text("{ not json")
    again = ReferenceCache(root=tmp_path)
    assert again.result(example.path, "lnd-apriori") == first
    assert again.runs == 1
