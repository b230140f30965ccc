"""What shapes a run and what it reports: the run dir's settings.json and
report.json (docs/report.md says what each file of a run dir holds). The
command line builds EvolveSettings from its options (whose defaults are
these fields'), the driver hands each of its steps that step's part of it
(DataSettings, ScoringSettings, SearchSettings), and the agents' evaluation
script and the HTML report read both back."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from routesim_evolve.corpus.worlds import WorldSecret
from routesim_evolve.evolve.judged import JudgedChild
from routesim_evolve.reflect.base import BackendOptions
from routesim_evolve.score.compare import Comparison
from routesim_evolve.simulate.executor import ExecutorSettings
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS, SandboxLimits


class _Part(BaseModel):
    """A step's part of EvolveSettings: its fields are EvolveSettings' own,
    by name, and have no defaults (EvolveSettings keeps each one once)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DataSettings(_Part):
    """What opening a run reads and writes: the corpus's splits, the seed,
    the run dir and the worlds every split is played in."""

    corpus: Path
    run_dir: Path
    seed_file: Path | None
    world_secret: WorldSecret | None


class ScoringSettings(_Part):
    """Where the pairs run and what each may use."""

    run_dir: Path
    executor: ExecutorSettings
    max_concurrency: int | None
    limits: SandboxLimits


class SearchSettings(_Part):
    """GEPA's search: its budget, minibatches, rotation and stops."""

    run_dir: Path
    seed: int
    minibatch: int
    max_evals: int | None
    max_proposals: int | None
    adaptive: bool
    plateau_evals: int | None
    max_cost: float | None
    acceptance: str | None


_P = TypeVar("_P", bound=_Part)


class EvolveSettings(BaseModel):
    """Everything that shapes a run (written to the run dir as settings.json)."""

    corpus: Path
    run_dir: Path
    degraded: bool = False
    seed_file: Path | None = None
    max_evals: int | None = Field(default=None, description="metric calls; None: 20 × |val|")
    max_proposals: int | None = None
    max_concurrency: int | None = Field(default=None,
                                        description="None: the executor's slots (cores)")
    minibatch: int = 3
    seed: int = 0
    adaptive: bool = True
    plateau_evals: int | None = Field(default=None, description="None: 5 × |val|")
    acceptance: str | None = Field(
        default=None, description="the acceptance rule by name (evolve/registry.py); None: "
        "the rule a resumed run began with, else the default there (the run dir's "
        "settings.json names the one the run used)")
    held_out_evals: int | None = Field(
        default=None, ge=1, description="candidate evaluations the held-out test may spend on "
        "reseeded draws of the test split (score/resolve.py); None: half the search's budget")
    timeout: float = Field(default=DEFAULT_LIMITS.timeout_s, gt=0,
                           description="wall-clock seconds per candidate and scenario")
    memory: int = Field(default=DEFAULT_LIMITS.memory_bytes, gt=0, description="heap bytes")
    reflection: list[str] = Field(
        default_factory=lambda: ["offline"],
        description="proposer specs in rotation order (docs/llm.md); the command line "
        "leaves it empty to have one detected",
    )
    prompts: Path | None = Field(default=None, description="prompt pack; None: the default")
    lm: BackendOptions = BackendOptions()
    max_cost: float | None = Field(
        default=None, gt=0, description="USD; the run stops once its LM replies cost this much"
    )
    prices: Path | None = Field(default=None, description="a price table over the bundled one")
    world_secret: WorldSecret | None = Field(
        default=None, exclude=True,
        description="the worlds played (corpus/worlds.py): None a fresh secret per run, "
                    "else the one given ('public', the corpus's own, or 64 hex digits, "
                    "parsed here once); never written to settings.json (the run dir "
                    "keeps it in world.key)")
    executor: ExecutorSettings = ExecutorSettings()

    @field_validator("world_secret", mode="before")
    @classmethod
    def _parse_world_secret(cls, value: object) -> object:
        """A secret given as text (the command line's, a benchmark's) is
        parsed once, here; WorldSecret.parse says what is wrong with it."""
        return WorldSecret.parse(value) if isinstance(value, str) else value

    @property
    def limits(self) -> SandboxLimits:
        """What one candidate may use on one scenario."""
        return DEFAULT_LIMITS.but(timeout_s=self.timeout, memory_bytes=self.memory)

    @property
    def data(self) -> DataSettings:
        return self._part(DataSettings)

    @property
    def scoring(self) -> ScoringSettings:
        return self._part(ScoringSettings)

    @property
    def search(self) -> SearchSettings:
        return self._part(SearchSettings)

    def _part(self, part: type[_P]) -> _P:
        # Read by name from these fields and properties: a part naming one
        # EvolveSettings lacks fails here, in every run's first step.
        return part.model_validate(self, from_attributes=True)


class RunSummary(BaseModel):
    """What a finished run reports."""

    run_dir: Path
    best_path: Path
    best_val: float
    seed_val: float
    candidates: int
    metric_calls: int
    test: Comparison
    notes: list[str] = []
    cost: str = Field(default="", description="what the LM replies cost, as the ledger says it")
    judged: list[JudgedChild] = Field(
        default=[], description="each child a sequential acceptance judged (evolve/judged.py)")
