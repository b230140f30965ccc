"""A run dir's own files, as the run writes them and the report reads them:
its settings and summary, and the stamp of the scoring version and simulator
it began under. Below both evolve (the writer) and report (a reader)."""
