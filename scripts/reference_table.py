"""The README's reference table: lnd-apriori, lnd-bimodal, ldk, the oracle and the seed
on the bundled corpus's held-out test split, per arena.

    python scripts/reference_table.py            # print the table
    python scripts/reference_table.py --readme   # also rewrite it in README.md

The table goes between the README's `<!-- reference-table -->` markers.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.evolve.seed import in_tree_seed
from routesim_evolve.report.heldout import render_table
from routesim_evolve.score.compare import compare_routers
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- reference-table -->", "<!-- /reference-table -->"


def table(corpus: Path, split: str) -> str:
    references = ReferenceResults()
    examples = load_examples(corpus, split)
    comparison = compare_routers({"seed": in_tree_seed().read_text()}, examples,
                                 Evaluator(references), references)
    return render_table(comparison)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--split", default="test")
    parser.add_argument("--readme", action="store_true", help="rewrite the table in README.md")
    args = parser.parse_args()
    text = table(args.corpus, args.split)
    print(text)
    if args.readme:
        readme = REPO / "README.md"
        body = readme.read_text()
        pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
        if not pattern.search(body):
            raise SystemExit(f"{readme}: no {BEGIN} … {END} markers")
        command = f"python scripts/reference_table.py --readme  # split: {args.split}"
        block = f"{BEGIN}\n<!-- made by: {command} -->\n{text}\n{END}"
        readme.write_text(pattern.sub(lambda _: block, body))
        print(f"\nrewrote the table in {readme}")


if __name__ == "__main__":
    main()
