from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI runs a fixed, reproducible set of examples; locally more are tried.
settings.register_profile(
    "ci", derandomize=True, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=300)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
