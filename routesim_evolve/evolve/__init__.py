"""The evolution driver: GEPA's optimize_anything over candidate routers."""
