"""Statistics and reports: paired comparisons of routers across scenarios."""
