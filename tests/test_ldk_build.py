"""The LDK bridge's build: keyed by its content, kept per cache folder, and
a missing cargo said plainly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import routesim_evolve.build.ldk as ldk
from routesim_evolve.layout import LDK_DIR


def _copy_sources(to: Path) -> Path:
    (to / "src").mkdir(parents=True)
    for path in ldk.bridge_sources(LDK_DIR):
        shutil.copy2(path, to / path.relative_to(LDK_DIR))
    return to


def test_the_key_follows_every_source_and_the_lock_file(tmp_path: Path):
    copy = _copy_sources(tmp_path / "ldk")
    base = ldk.bridge_key(copy)
    assert base == ldk.bridge_key(LDK_DIR)
    for name in ("src/failure.rs", "Cargo.lock", "Cargo.toml"):
        path = copy / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert ldk.bridge_key(copy) != base, name
        path.write_bytes(original)
    assert ldk.bridge_key(copy) == base


def test_a_fresh_cache_folder_gets_the_bridge_and_keeps_it(tmp_path: Path):
    root = tmp_path / "cache"
    first = ldk.bridge_binary(root=root)
    assert first.parent == root / "ldk" and first.is_file()
    assert first.name == f"{ldk.BRIDGE_NAME}-{ldk.bridge_key()}"
    stamp = first.stat().st_mtime_ns
    assert ldk.bridge_binary(root=root) == first
    assert first.stat().st_mtime_ns == stamp  # kept, not built again


def test_no_cargo_is_said_with_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ROUTESIM_CARGO", raising=False)
    ldk.cargo_binary.cache_clear()
    try:
        with pytest.raises(ldk.LdkBuildError, match=r"no `cargo` on PATH.*install\.sh"):
            ldk.cargo_binary()
    finally:
        ldk.cargo_binary.cache_clear()


def test_a_bridge_that_does_not_build_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # Cargo's shared build folder: rust-lightning is compiled there already.
    monkeypatch.setenv("ROUTESIM_LDK_TARGET",
                       os.environ.get("ROUTESIM_LDK_TARGET") or str(LDK_DIR / "target"))
    copy = _copy_sources(tmp_path / "ldk")
    main = copy / "src" / "main.rs"
    main.write_text(main.read_text() + "\nfn broken( {\n")
    with pytest.raises(ldk.LdkBuildError, match="building the LDK bridge failed") as failed:
        ldk.bridge_binary(copy, root=tmp_path / "cache")
    assert "unclosed delimiter" in str(failed.value)  # cargo's own message
    assert not (tmp_path / "cache" / "ldk").exists() or not any(
        (tmp_path / "cache" / "ldk").iterdir())
