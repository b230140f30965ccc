"""Reflection back-ends: the LMs and agent CLIs that propose new candidates."""
