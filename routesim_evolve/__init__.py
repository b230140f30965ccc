"""routesim-evolve: evolve Lightning payment routers with GEPA and score them
against lnd's production routing stack in a Go payment simulator.

The package follows a scenario through the pipeline, one subpackage a step:
corpus → build → simulate → score → reflect → propose.
"""

__version__ = "0.1.0"
