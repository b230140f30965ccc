"""The HTML report of a run dir, read as text: every section is there with
the run's own figures, the page needs nothing outside itself, and a run dir
that is missing or malformed is a user error that names the file."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_run import CHILD, COST_USD, SEED, MemoryReferences, make_run

from routesim_evolve.cli import main
from routesim_evolve.evolve.driver import RunSummary
from routesim_evolve.report.heldout import arena_rows, distance_rows
from routesim_evolve.report.html import render_compare_report, render_run_report
from routesim_evolve.score.evaluator import candidate_hash

IMG = re.compile(r'<img alt="[^"]+" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


@pytest.fixture()
def run_dir(tiny_corpus: Path, tmp_path: Path) -> Path:
    return make_run(tmp_path / "run", tiny_corpus)


def _pngs(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in IMG.findall(html)]


def test_report_has_every_section_with_the_runs_figures(run_dir: Path):
    html = render_run_report(run_dir, references=MemoryReferences())
    # Six figures: val curve, lineage, Pareto, arena bars, pairs, sizes; all PNGs.
    pngs = _pngs(html)
    assert len(pngs) == 6 and html.count("<img") == 6
    assert all(p.startswith(b"\x89PNG\r\n\x1a\n") and len(p) > 2000 for p in pngs)
    # Self-contained: no link, script or image from elsewhere.
    assert not re.search(r'(src|href)="(?!data:)', html)
    # Lineage: the child's parent and proposer, its val score; the loser rejected.
    child, seed = candidate_hash(CHILD), candidate_hash(SEED)
    row = re.search(rf"<td class=\"mono\">{child}</td>\s*<td class=\"mono\">{seed}</td>"
                    r"<td>claude:opus</td><td>accepted</td>", html)
    assert row, "the child's lineage row"
    assert "<td>offline</td><td>rejected</td>" in html
    # Cost: the log's per-reply lm_usage events, summed, unpriced ones named.
    assert f"${sum(COST_USD):.2f} + unpriced replies of openai:gpt-5.5" in html
    assert ">3<" in html and ">1050<" in html  # replies, output tokens
    assert "No LM replies recorded" not in html
    # Held-out: the arena table's headroom, as heldout computes it.
    summary = RunSummary.model_validate_json((run_dir / "report.json").read_bytes())
    all_best = next(r for r in arena_rows(summary.test) if (r.arena, r.router) == ("all", "best"))
    assert all_best.headroom is not None and all_best.headroom_text() in html
    # Its distance to the oracle, split by score term.
    best = next(r for r in distance_rows(summary.test) if (r.arena, r.router) == ("all", "best"))
    assert "Distance to the oracle, by score axis" in html
    assert re.search(rf"<td>all</td><td>best</td>\s*<td class=\"num\">\d+</td>"
                     rf"<td class=\"num\">{re.escape(f'{best.distance:+.4f}')}</td>\s*"
                     rf"<td class=\"num\">{re.escape(f'{best.success:+.4f}')}</td>", html)
    pair = summary.test.pairs[1]
    assert f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}]" in html
    # By payment size: three decades, lnd's and the oracle's rows too.
    for label in ("10k–100k sat", "100k–1M sat", "1M–10M sat"):
        assert f"<td>{label}</td><td>oracle</td>" in html
    # Pareto: both candidates on val; the child dominates the seed.
    assert re.search(rf"{child}</td>.*?<td>yes</td>", html, re.S)
    # Counts say what they count: the budget's and all evaluations.
    words = " ".join(html.split())
    assert f"{summary.metric_calls} metric calls of the search budget" in words
    assert "evaluations in all (those of the held-out test split included)" in words
    # The diff of best against the seed.
    assert '<span class="add">+\treturn 2 // child&#39;s change</span>' in html
    assert '<span class="del">-\treturn 1</span>' in html


def test_a_run_in_progress_reports_what_it_has(tiny_corpus: Path, tmp_path: Path):
    run_dir = make_run(tmp_path / "run", tiny_corpus, finished=False)
    # A torn last line (a run killed while writing) is left out.
    with (run_dir / "log.jsonl").open("a") as f:
        f.write('{"t": 6.0, "event": "pa')
    html = render_run_report(run_dir, references=MemoryReferences())
    assert html.count("Not scored yet") == 2
    assert len(_pngs(html)) == 3  # val curve, lineage, Pareto


def test_a_run_without_lm_replies_says_so(run_dir: Path):
    log = run_dir / "log.jsonl"
    log.write_text("".join(line + "\n" for line in log.read_text().splitlines()
                           if '"lm_usage"' not in line))
    assert "No LM replies recorded" in render_run_report(run_dir, references=MemoryReferences())


def test_compare_page_has_the_tables_and_figures(run_dir: Path):
    summary = RunSummary.model_validate_json((run_dir / "report.json").read_bytes())
    html = render_compare_report(summary.test, "best vs seed")
    assert len(_pngs(html)) == 2 and "Paired comparisons" in html and "<td>oracle</td>" in html


def test_cli_writes_the_page_by_default_in_the_run_dir(run_dir: Path, monkeypatch):
    # The CLI reads lnd from the reference cache; here it answers from memory.
    monkeypatch.setattr("routesim_evolve.report.html.ReferenceResults",
                        lambda: type("R", (), {"with_oracle": lambda self: MemoryReferences()})())
    out = CliRunner().invoke(main, ["report", str(run_dir)])
    assert out.exit_code == 0, out.output
    assert len(_pngs((run_dir / "report.html").read_text())) == 6


@pytest.mark.parametrize(("damage", "named"), [
    (lambda d: d.rename(d.with_name("gone")), "no such directory"),
    (lambda d: (d / "log.jsonl").unlink(), "log.jsonl: missing"),
    (lambda d: (d / "settings.json").write_text("{"), "settings.json: malformed"),
    (lambda d: (d / "report.json").write_text('{"best_val": "x"}'), "report.json: malformed"),
    (lambda d: (d / "log.jsonl").write_text('{"t": 1}\n{"t": 2, "event": "x"}\n'),
     "log.jsonl: line 1 is malformed"),
])
def test_a_missing_or_malformed_run_dir_is_a_user_error(run_dir: Path, damage, named):
    damage(run_dir)
    out = CliRunner().invoke(main, ["report", str(run_dir)])
    assert out.exit_code == 2
    assert named in out.output and "Give the run dir" in out.output


def test_a_router_keeps_its_colour_on_every_page() -> None:
    from routesim_evolve.report.plots import FIXED_COLOURS, colours

    run = colours(["best", "seed", "lnd-apriori", "lnd-bimodal", "oracle"])
    compare = colours(["planner", "skeptic", "lnd-apriori", "lnd-bimodal", "oracle"])
    assert run == {r: FIXED_COLOURS[r] for r in run}
    assert all(compare[r] == run[r] for r in ("lnd-apriori", "lnd-bimodal", "oracle"))
    assert compare["planner"] != compare["skeptic"]
    assert colours(["skeptic", "planner"]) == {r: compare[r] for r in ("skeptic", "planner")}
    assert not set(compare.values()) - set(FIXED_COLOURS.values()) >= {run["best"]}


def test_a_degraded_run_says_so_in_its_header(run_dir: Path):
    import json

    settings = json.loads((run_dir / "settings.json").read_text())
    settings["degraded"] = True
    (run_dir / "settings.json").write_text(json.dumps(settings))
    html = render_run_report(run_dir, references=MemoryReferences())
    assert "degraded-attribution prompt addendum" in " ".join(html.split())
