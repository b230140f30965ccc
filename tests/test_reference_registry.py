"""The reference routers' registry (simulate/routers.py) names exactly the
routers the full routesim binary registers (routers_reference.go), and the
records say what the report and the comparisons need."""

from __future__ import annotations

import subprocess

from routesim_evolve.build.cache import BinaryCache
from routesim_evolve.simulate.reference import ReferenceCache
from routesim_evolve.simulate.routers import (
    ORACLE,
    REFERENCE_NAMES,
    REFERENCE_ROUTERS,
    Role,
)
from routesim_evolve.simulate.sandbox import CANDIDATE_ROUTER


def test_the_registry_names_the_routers_the_binary_has(tmp_path):
    # The real (content-addressed) cache: lnd's link is paid once per module.
    refs = ReferenceCache(BinaryCache(), root=tmp_path)
    in_binary = set(refs.routers()) - {CANDIDATE_ROUTER}
    assert sorted(REFERENCE_NAMES) == sorted(in_binary), (
        "a reference router registered on one side only: "
        "go/cmd/internal/routesimcmd/routers_reference.go and simulate/routers.py")
    usage = subprocess.run([refs.binary(), "-h"], capture_output=True, text=True,
                           timeout=30, check=False).stderr
    for router in REFERENCE_ROUTERS:
        if router.bridge is not None:  # Go's usage names a flag with one dash
            assert f" {router.bridge.option.removeprefix('-')} " in usage, router.name


def test_each_record_is_distinct_and_one_router_is_the_ceiling():
    assert len(set(REFERENCE_NAMES)) == len(REFERENCE_NAMES)
    assert len({r.colour for r in REFERENCE_ROUTERS}) == len(REFERENCE_ROUTERS)
    assert [r.name for r in REFERENCE_ROUTERS if r.role is Role.CEILING] == [ORACLE]
    assert CANDIDATE_ROUTER not in REFERENCE_NAMES
