"""Render the reflection prompt from a prompt pack and the corpus manifest.

The static part (objective, background with the contract's exact Go
declarations, and with --degraded the attribution addendum) is rendered once
per run and stays byte-identical between iterations, so providers' prompt
caching can reuse it; the dynamic part (the current candidate and its
feedback) comes last.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import jinja2
from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.allowlist import load_allowlist
from routesim_evolve.build.gomodule import (
    build_env,
    cache_root,
    go_binary,
    go_module_dir,
    lnd_version,
)
from routesim_evolve.build.gomodule import module_fingerprint as go_fingerprint
from routesim_evolve.corpus.arenas import in_order
from routesim_evolve.corpus.manifest import ArenaRates, Manifest
from routesim_evolve.fsutil import atomic_write
from routesim_evolve.layout import CHAMPIONS_DIR, PROMPTS_DIR
from routesim_evolve.reflect.base import PromptParts
from routesim_evolve.score.axes import EFFICIENCY_WEIGHT
from routesim_evolve.score.feedback import ScenarioFeedback

DEFAULT_PACK = PROMPTS_DIR / "default"
# What earlier champions learned, one "- " bullet a lesson; the background
# template lists them.
DEFAULT_LESSONS = CHAMPIONS_DIR / "lessons.md"

# What `go doc` shows the model: our contract package whole, and the lnd
# types a router builds routes and reads failures with.
CONTRACT_DOCS: tuple[tuple[str, ...], ...] = (
    ("-all", "./routing"),
    ("github.com/lightningnetwork/lnd/routing/route", "Route"),
    ("github.com/lightningnetwork/lnd/routing/route", "Hop"),
    ("github.com/lightningnetwork/lnd/routing/route", "NewRouteFromHops"),
    ("github.com/lightningnetwork/lnd/routing/route", "Route.TotalFees"),
    ("github.com/lightningnetwork/lnd/lnwire", "FailureMessage"),
)
# Moves whenever what is made of `go doc`'s output moves: the cached texts
# are kept by it and by the module's content.
DOCS_FORMAT = 2
# Of lnd's Route and Hop, the fields a router sets or reads in the
# simulator; the others (blinded paths, AMP, custom records, TLV payloads,
# a TODO of lnd's) are noise a model cannot act on, and are left out.
LND_FIELDS: dict[str, frozenset[str]] = {
    "Route": frozenset({"TotalTimeLock", "TotalAmount", "SourcePubKey", "Hops"}),
    "Hop": frozenset({"PubKeyBytes", "ChannelID", "OutgoingTimeLock", "AmtToForward", "MPP"}),
}
# Their methods a router has no use for: the onion's encoding.
LND_METHODS_LEFT_OUT = ("ToSphinxPath", "PackHopPayload", "PayloadSize")
# And the trusted toolkit a candidate may build on, whole: a model that does
# not know its API rewrites its machinery into every candidate.
TOOLKIT_DOCS: tuple[tuple[str, ...], ...] = (("-all", "./routekit"),)


class GoDocs(BaseModel):
    """The Go declarations the prompt quotes (from `go doc`)."""

    model_config = ConfigDict(frozen=True)

    contract: str
    toolkit: str


class PromptError(Exception):
    """The prompt cannot be rendered (e.g. --degraded without an attribution arena)."""


def go_docs(go_dir: Path | None = None) -> GoDocs:
    """The contract's and the toolkit's declarations, cached by module content."""
    go_dir = go_dir or go_module_dir()
    return GoDocs(contract=_go_doc(go_dir, "contract", CONTRACT_DOCS),
                  toolkit=_go_doc(go_dir, "toolkit", TOOLKIT_DOCS))


def _go_doc(go_dir: Path, name: str, queries: tuple[tuple[str, ...], ...]) -> str:
    cached = cache_root() / "prompts" / f"{name}-{DOCS_FORMAT}-{go_fingerprint(go_dir)}.txt"
    if cached.is_file():
        return cached.read_text()
    parts = []
    for args in queries:
        out = subprocess.run(
            [go_binary(), "doc", *args],
            cwd=go_dir,
            env=build_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise PromptError(f"go doc {' '.join(args)} failed: {out.stderr.strip()}")
        parts.append(_trim_lnd_doc(out.stdout.strip()))
    text = "\n\n".join(parts)
    atomic_write(cached, text.encode())
    return text


def _trim_lnd_doc(doc: str) -> str:
    """`go doc` of an lnd type with only the fields and methods a router
    uses (LND_FIELDS, LND_METHODS_LEFT_OUT); any other text unchanged."""
    lines = doc.splitlines()
    struct = next((name for name in LND_FIELDS
                   if any(line.startswith(f"type {name} struct {{") for line in lines)), None)
    if struct is None:
        return doc
    out: list[str] = []
    block: list[str] = []
    inside = False
    for line in lines:
        if line.startswith(f"type {struct} struct {{"):
            inside = True
            out.append(line)
        elif inside and line == "}":
            out += _kept_fields(block, LND_FIELDS[struct])
            out += ["", "\t// (lnd's other fields, for blinded paths, AMP, custom records and",
                    "\t// TLV payloads, are left out here: the simulator ignores them.)"]
            out.append(line)
            inside, block = False, []
        elif inside:
            block.append(line)
        elif not any(f") {m}(" in line for m in LND_METHODS_LEFT_OUT):
            out.append(line)
    return "\n".join(out)


def _kept_fields(body: list[str], keep: frozenset[str]) -> list[str]:
    """The struct body's fields (each with the comment above it) that are
    in keep, separated as go doc separates them."""
    fields: list[list[str]] = [[]]
    for line in body:
        if not line.strip():
            fields.append([])
        else:
            fields[-1].append(line)
    kept = []
    for field in fields:
        decl = next((ln for ln in field if not ln.strip().startswith("//")), "")
        if decl.split() and decl.split()[0] in keep:
            kept.append("\n".join(field))
    return "\n\n".join(kept).splitlines()


HandIn = Literal["reply", "edit"]
#: How a proposal comes back, said once, at the prompt's end: a model replies
#: with the file; an agent edits it where it works.
HAND_IN: dict[str, str] = {
    "reply": ("Start your reply with one line saying what you change and why (your next "
              "prompts recall it, with how the change fared), then the complete new "
              "`candidate_impl.go` in one ```go block."),
    "edit": ("Edit `candidate_impl.go` in your working directory in place: when you exit, "
             "its contents are your proposal, and nothing else you write is kept."),
}


class PromptPack:
    """A folder of templates, rendered against one corpus manifest."""

    def __init__(
        self,
        manifest: Manifest,
        *,
        degraded: bool = False,
        pack_dir: Path = DEFAULT_PACK,
        lessons: Sequence[str] = (),
        docs: GoDocs | None = None,
    ) -> None:
        if degraded and manifest.degraded_attribution() is None:
            raise PromptError(
                "--degraded needs a corpus with an attribution arena, and this corpus has "
                f"only: {', '.join(manifest.arenas)}. Regenerate it with --attribution."
            )
        if not pack_dir.is_dir():
            raise PromptError(f"prompt pack {pack_dir} does not exist")
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(pack_dir),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        self._env.globals["pct"] = lambda x: f"{100 * float(x):.0f}%"
        self.degraded = degraded
        self.context = world_context(manifest, degraded=degraded)
        self.context["lessons"] = lessons_for(lessons, manifest.arenas)
        # Each arena's paragraph is its record's (corpus/arenas.py), in the pack's terms.
        self.context["arena_paragraphs"] = [
            self._env.from_string(spec.prompt).render(self.context)
            for spec in in_order(manifest.arenas)
        ]
        docs = docs or go_docs()
        self.context["contract_doc"] = docs.contract
        self.context["toolkit_doc"] = docs.toolkit
        self.static = self._render_static()

    def _render_static(self) -> str:
        names = ["objective.md.j2", "background.md.j2"]
        if self.degraded:
            names.append("degraded.md.j2")
        return "\n\n".join(self._env.get_template(n).render(self.context).strip() for n in names)

    def render(
        self, candidate: str, feedback: Sequence[ScenarioFeedback], *, note: str | None = None,
        hand_in: HandIn = "reply", history: Sequence[str] = (),
        parent_seen: str | None = None,
    ) -> PromptParts:
        """The prompt for one proposal; `note` tells the model about its
        previous reply (e.g. that it changed nothing); `hand_in` how the file
        comes back (HAND_IN: a reply, or an agent's edit in place);
        `parent_seen` what the acceptance saw of the candidate when it was
        kept (its gain over its own parent, interval, evaluations)."""
        dynamic = self._env.get_template("iteration.md.j2").render(
            candidate=candidate.strip(), feedback=[_template_item(f) for f in feedback], note=note,
            reply=HAND_IN[hand_in], history=list(history), parent_seen=parent_seen,
        )
        return PromptParts(static=self.static, dynamic=dynamic.strip())


def read_lessons(path: Path = DEFAULT_LESSONS) -> list[str]:
    """The bullets of a lessons file (none when it does not exist)."""
    if not path.is_file():
        return []
    lessons, current = [], ""
    for line in path.read_text().splitlines():
        if line.startswith("- "):
            if current:
                lessons.append(current)
            current = line[2:].strip()
        elif current and line.startswith("  ") and line.strip():
            current += " " + line.strip()
        elif current:
            lessons.append(current)
            current = ""
    if current:
        lessons.append(current)
    return lessons


#: A lesson about some arenas only starts with them in brackets: "[drift] …".
_ARENA_TAG = re.compile(r"^\[([a-z_]+(?:,\s*[a-z_]+)*)\]\s*")


def lessons_for(lessons: Sequence[str], arenas: Iterable[str]) -> list[str]:
    """The lessons that concern a corpus of these arenas, without their tags:
    one about other arenas only is text the model cannot act on."""
    have = set(arenas)
    kept = []
    for lesson in lessons:
        tag = _ARENA_TAG.match(lesson)
        if tag is None:
            kept.append(lesson)
        elif have & {a.strip() for a in tag.group(1).split(",")}:
            kept.append(lesson[tag.end():])
    return kept


def world_context(manifest: Manifest, *, degraded: bool) -> dict[str, Any]:
    """The numbers the templates state, all read from the manifest."""
    arenas = manifest.arenas
    if not arenas:
        raise PromptError("the corpus manifest lists no arena")
    # The common world's numbers: the first arena's in the registry's order
    # (base, when the corpus has it).
    base = arenas[in_order(arenas)[0].name]
    every = list(arenas.values())
    ctx: dict[str, Any] = {
        "lnd_version": lnd_version(),
        "degraded": degraded,
        "arenas": list(arenas),
        "efficiency_weight": str(Fraction(EFFICIENCY_WEIGHT).limit_denominator(12)),
        "allowed_imports": load_allowlist().allowed_imports,
        "stale_share": base.stale_gossip.share,
        "uniform_share": base.liquidity.uniform_share,
        "bimodal_scale_sat": base.liquidity.bimodal_scale_sat,
        "payments_per_scenario": _range_text(
            min(a.payments_per_scenario.min for a in every),
            max(a.payments_per_scenario.max for a in every),
            "",
        ),
        "amount_range": _range_text(
            min(a.amount_sat.min for a in every), max(a.amount_sat.max for a in every), " sat"
        ),
        "max_parts": max(a.max_parts for a in every),
        # The corpus's rules, as its first arena plays them (the generator
        # writes one block for every arena unless told otherwise).
        "rules": base.rules.model_dump() if base.rules else None,
        "held_arenas": [name for name, a in arenas.items() if a.atomic_mpp],
        "per_part_arenas": [name for name, a in arenas.items() if not a.atomic_mpp],
        "max_attempts": max(a.max_attempts for a in every),
        "fee_limit": _fee_limit_text(base),
    }
    for spec in in_order(arenas):
        if spec.prompt_rates:
            ctx[spec.name] = getattr(arenas[spec.name], spec.prompt_rates).model_dump()
    return ctx


def _range_text(low: float, high: float, unit: str) -> str:
    if low == high:
        return f"{low:,.0f}{unit}"
    return f"{low:,.0f} to {high:,.0f}{unit}"


def _fee_limit_text(rates: ArenaRates) -> str:
    return f"{rates.fee_limit_base_msat:,} msat + {rates.fee_limit_ppm:,.0f} ppm of the amount"


def _template_item(feedback: ScenarioFeedback) -> dict[str, Any]:
    """A feedback as the templates see it: every field, plus `title`."""
    return {**feedback.model_dump(mode="json"), "title": feedback.title}
