"""The size of the reflection prompt's static prefix on a corpus, by part:
what every proposal of a run sends before its own candidate and feedback.

    python bench/bench_prompt.py [--corpus corpus] [--degraded]

Prints the characters of the static prefix and of each of its parts (the
objective with the contract, the background with the toolkit and the
lessons this corpus's arenas get, the degraded addendum).
"""

from __future__ import annotations

import argparse

from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.reflect.prompts import PromptPack, go_docs, read_lessons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--degraded", action="store_true")
    args = parser.parse_args()
    docs = go_docs()
    lessons = read_lessons()
    pack = PromptPack(load_manifest(args.corpus), degraded=args.degraded, lessons=lessons,
                      docs=docs)
    print(f"static prefix on {args.corpus}: {len(pack.static):,} characters")
    print(f"  of which the contract (go doc): {len(docs.contract):,}; the toolkit (go doc): "
          f"{len(docs.toolkit):,}; lessons kept: {len(pack.context['lessons'])} of "
          f"{len(lessons)}, {sum(map(len, pack.context['lessons'])):,} characters")


if __name__ == "__main__":
    main()
