"""Proposers: where new candidates come from (offline knob search, LM reflection)."""
