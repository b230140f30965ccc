"""settings.json is what a run dir says shaped it: splitting the settings
into each stage's own must not change a byte of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from routesim_evolve.runs.settings import EvolveSettings

#: EvolveSettings.model_dump_json() of the object below, as written before
#: the stages took settings of their own (commit 7d8ee16), plus the
#: acceptance rule's name and the held-out test's evaluations (issue 44;
#: null: the registry's default and the search's budget).
TYPICAL_JSON = (
    '{"corpus":"corpus","run_dir":"runs/r1","degraded":false,'
    '"seed_file":"champions/probabilistic.go","max_evals":40,"max_proposals":null,'
    '"max_concurrency":null,"minibatch":4,"seed":7,"adaptive":true,"plateau_evals":null,'
    '"acceptance":null,"held_out_evals":null,"timeout":60.0,"memory":1073741824,"reflection":["offline","anthropic:claude-opus-4-7"],'
    '"prompts":null,"lm":{"idle_timeout":300.0,"agent_timeout":1800.0,"cache_ttl":"5m",'
    '"max_output_tokens":64000},"max_cost":2.5,"prices":null,'
    '"executor":{"kind":"local","ray_address":null}}'
)


def _typical() -> EvolveSettings:
    return EvolveSettings(
        corpus=Path("corpus"), run_dir=Path("runs/r1"),
        seed_file=Path("champions/probabilistic.go"), max_evals=40, minibatch=4, seed=7,
        reflection=["offline", "anthropic:claude-opus-4-7"], max_cost=2.5,
        world_secret="public",
    )


def test_settings_json_is_unchanged() -> None:
    assert _typical().model_dump_json() == TYPICAL_JSON


@pytest.mark.parametrize("part", ["data", "scoring", "search"])
def test_a_step_part_holds_the_run_settings_values(part: str) -> None:
    settings = _typical()
    for name, value in getattr(settings, part):
        assert value == getattr(settings, name), name
