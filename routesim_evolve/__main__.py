"""`python -m routesim_evolve`: see routesim_evolve.cli."""

from routesim_evolve.cli import main

main()
