"""Generate a scenario corpus (graphs/, train/, val/, test/, manifest.json).

A thin wrapper of `python -m routesim_evolve corpus generate`; see --help for
every option, and corpus/README.md for the command that made the bundled corpus.

    python scripts/gen_scenarios.py --out corpus --seed 1 --nodes 400,700
"""

from routesim_evolve.corpus.commands import generate_command

if __name__ == "__main__":
    generate_command(prog_name="gen_scenarios.py")
