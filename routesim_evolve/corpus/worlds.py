"""Hidden worlds keyed by a secret: what a candidate cannot replay.

A scenario file is public, and so is its seed: a candidate that knows the
simulator's code could draw every hidden balance, stale policy, background
payment and attribution draw from it, and route as the oracle does. So the
worlds the harness plays are drawn from a seed no candidate can compute: an
HMAC of the scenario's name and seed under a secret the harness holds.

- An evolution run makes a fresh secret and keeps it in its run dir
  (`world.key`, readable by its owner only), so a resume plays the same
  worlds. Every router of the run meets the same worlds (common random
  numbers hold).
- `compare` and `eval` play hidden worlds under a fresh secret unless given
  one, and name it (output and `--json`), so that a table is played again
  with `--world-secret HEX`; the corpus's own worlds (`PUBLIC`) only when
  asked, since a candidate that carries the corpus can forge a table of
  them, and then every table says so. `--check-replay` plays both and flags
  a candidate that scores more in the corpus's own (score/compare.py,
  `replay_check`).

Resolving writes each scenario anew (graph path made absolute, seed
replaced by the hidden one) under a work dir the candidate never sees. A
payment sized as a share of what the network holds (`amount_share`, set by
the generator's difficulty) is sized again in the hidden world, as a share
of the max flow to its target there at the start (Go's `maxflow`), so the
difficulty holds in worlds the generator never saw. The share is the public
one scaled by a factor drawn under the secret (WorldSecret.hidden_share):
at the public share itself, amount / share would be the hidden flow, and
the candidate is handed the amount.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.difficulty import starting_flows
from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.corpus.load import graph_path_of, load_scenario
from routesim_evolve.fsutil import atomic_write

#: The name of a run's secret in its run dir.
SECRET_FILE: Final = "world.key"
#: How hidden worlds are drawn from a secret, stamped in a run dir: a run
#: resumed under another rule would play other worlds than its saved scores
#: came from (runs/stamp.py refuses it). 2: each share perturbed under the
#: secret; 1: sized at the public share.
WORLDS_RULE: Final = "routesim-worlds/2"
#: The rule of a run stamped before the rule was recorded.
FIRST_WORLDS_RULE: Final = "routesim-worlds/1"
#: What an HMAC of a world is keyed under, so a key reused elsewhere yields
#: nothing here.
_DOMAIN: Final = b"routesim-world/1\0"
#: Hidden seeds stay below 2^63, a size every JSON reader keeps exact.
_SEED_BITS: Final = 63
#: What a payment's hidden share is keyed under (hidden_share).
_SHARE_DOMAIN: Final = b"routesim-share/1\0"
#: A hidden share is the public one times a factor log-uniform on
#: [1/SPREAD, SPREAD]: amount / public share then places the hidden flow only
#: within a window of SPREAD² (2.25), about the width the arena's public
#: difficulty range (hard: 0.4 to 0.95) already gives away.
SHARE_SPREAD: Final = 1.5


class WorldSecret(BaseModel):
    """The secret the hidden worlds derive from; `public` plays the corpus's
    own worlds (no secret)."""

    model_config = ConfigDict(frozen=True)

    key: bytes = b""

    @property
    def public(self) -> bool:
        return not self.key

    @property
    def rule(self) -> str:
        """The rule its worlds are drawn by; "" for the corpus's own."""
        return "" if self.public else WORLDS_RULE

    @classmethod
    def fresh(cls) -> WorldSecret:
        return cls(key=secrets.token_bytes(32))

    @classmethod
    def parse(cls, text: str) -> WorldSecret:
        """`public`, `random`, or 64 hex digits; ValueError otherwise."""
        if text == "public":
            return PUBLIC
        if text == "random":
            return cls.fresh()
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) != 32:
            raise ValueError(f"world secret {text!r}: give public, random or 64 hex digits")
        return cls(key=key)

    def hidden_seed(self, name: str, seed: int) -> int:
        """The seed scenario `name` with public `seed` is played with."""
        if self.public:
            return seed
        return self._draw(_DOMAIN, f"{name}\0{seed}") >> (64 - _SEED_BITS)

    def hidden_share(self, name: str, index: int, share: float) -> float:
        """The share of the hidden world's max flow that payment `index` of
        scenario `name` is sized at, given its public `share`.

        Sized at the public share itself, amount / share would be the hidden
        flow to the target exactly, and the candidate is handed the amount.
        So the share is scaled by a factor drawn under the secret,
        log-uniform on [1/SHARE_SPREAD, SHARE_SPREAD]; a product over 1 is
        divided by the factor instead (below the public share, never clamped
        to 1, which would hand over the flow itself). The median factor is 1,
        so the difficulty holds on the whole; near a share of 1 it eases."""
        if self.public:
            return share
        unit = self._draw(_SHARE_DOMAIN, f"{name}\0{index}") / 2**64
        factor = SHARE_SPREAD ** (2 * unit - 1)
        return share * factor if share * factor <= 1 else share / factor

    def _draw(self, domain: bytes, what: str) -> int:
        """64 bits of HMAC-SHA256 under the secret."""
        mac = hmac.new(self.key, domain + what.encode(), hashlib.sha256)
        return int.from_bytes(mac.digest()[:8], "big")


#: The corpus's own worlds.
PUBLIC: Final = WorldSecret()


class WorldsChanged(ValueError):
    """A run dir resumed with another secret than it began under."""


def run_secret(run_dir: Path, wanted: WorldSecret | None = None) -> WorldSecret:
    """The run's secret: the one its run dir keeps, else `wanted` (a fresh one
    when None), kept there (mode 0600) for the run's resumes. Raises
    WorldsChanged when the run dir keeps another than `wanted`."""
    path = run_dir / SECRET_FILE
    if path.is_file():
        try:
            kept = WorldSecret.parse(path.read_text().strip())
        except (OSError, ValueError) as exc:
            raise WorldsChanged(f"{path}: not a world secret ({exc}); restore it from a "
                                "backup, or start a new run") from None
        if wanted is not None and wanted != kept:
            raise WorldsChanged(
                f"{run_dir} was begun in the worlds of another --world-secret ({path}): its "
                "scores are not comparable with these. Resume it without --world-secret, or "
                "start a new run.")
        return kept
    secret = wanted or WorldSecret.fresh()
    atomic_write(path, (secret.key.hex() if not secret.public else "public").encode(),
                 mode=0o600)
    return secret


def resolve(examples: Sequence[ScenarioExample], secret: WorldSecret,
            workdir: Path) -> list[ScenarioExample]:
    """The examples as the harness plays them under `secret`: the same ones
    when it is public, else each written anew under workdir (one folder per
    split, the same names) with its hidden seed and payments sized by their
    share in the hidden world."""
    if secret.public:
        return list(examples)
    written = [_write_hidden(ex, secret, workdir) for ex in examples]
    _size_shares(written, secret)
    return [ScenarioExample.of(ex.split, load_scenario(path))
            for ex, (path, _) in zip(examples, written, strict=True)]


def _write_hidden(ex: ScenarioExample, secret: WorldSecret,
                  workdir: Path) -> tuple[Path, dict[str, Any]]:
    """The scenario written with its hidden seed, where, and what."""
    data = json.loads(ex.path.read_text())
    data["graph"] = str(Path(graph_path_of(ex.path, data["graph"])).resolve())
    data["seed"] = secret.hidden_seed(data.get("name", ex.name), int(data.get("seed", 0)))
    path = workdir / ex.split / ex.path.name
    atomic_write(path, json.dumps(data).encode())
    return path, data


def _size_shares(written: Sequence[tuple[Path, dict[str, Any]]], secret: WorldSecret) -> None:
    """Each payment with an amount_share is sized at its hidden share
    (WorldSecret.hidden_share) of the max flow to its target at the start of
    its hidden world (at least 1 sat): the files are written again with
    those amounts and shares."""
    sized = [(path, data) for path, data in written
             if any("amount_share" in pay for pay in data["payments"])]
    if not sized:
        return
    flows = starting_flows([path for path, _ in sized])
    for (path, data), to_targets in zip(sized, flows, strict=True):
        for index, (payment, flow) in enumerate(zip(data["payments"], to_targets, strict=True)):
            if "amount_share" in payment:
                share = secret.hidden_share(data.get("name", path.stem), index,
                                             payment["amount_share"])
                payment["amount_share"] = share
                payment["amount_msat"] = max(int(share * flow) // 1000, 1) * 1000
        atomic_write(path, json.dumps(data).encode())


def resolved_dir(run_dir: Path) -> Path:
    """Where a run keeps the scenarios it plays."""
    return run_dir / "worlds"


def resolve_run(run_dir: Path, examples: Sequence[ScenarioExample],
                secret: WorldSecret) -> list[ScenarioExample]:
    """The examples as the run plays them, under its secret (run_secret's),
    written under its worlds folder."""
    return resolve(examples, secret, resolved_dir(run_dir))


def played_examples(run_dir: Path, split: str) -> list[ScenarioExample] | None:
    """The scenarios of one split as the run played them, in name order;
    None for a run that kept none (one from before hidden worlds, which
    played the corpus's own)."""
    folder = resolved_dir(run_dir) / split
    if not (run_dir / SECRET_FILE).is_file() or not folder.is_dir():
        return None
    return [ScenarioExample.of(split, load_scenario(p)) for p in sorted(folder.glob("*.json"))]
