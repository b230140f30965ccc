"""Scoring: turn simulator results into scores and diagnostic feedback."""
