"""Import a real channel graph from a node's gossip dump:

- lnd's `lncli describegraph` JSON: `nodes[]` (pub_key, alias, features) and
  `edges[]` (channel_id, node1_pub, node2_pub, capacity, node1_policy,
  node2_policy); numbers are mostly strings in lncli output.
- Core Lightning's `listchannels` JSON: `{"channels": [...]}`, one entry per
  direction (source, destination, short_channel_id, satoshis or amount_msat,
  base_fee_millisatoshi, fee_per_millionth, delay, htlc_minimum_msat,
  htlc_maximum_msat, active); msat amounts are "123msat" strings in some
  versions. The two directions are paired by short_channel_id.

Real dumps contain things the format refuses; the importer repairs or drops
them and counts what it did (`ImportReport`): channels with an unknown or
identical end, non-positive capacity, directions that disagree on their ends,
htlc_max outside [htlc_min, capacity] (clamped into it, or dropped when even
htlc_min exceeds the capacity).
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple

import orjson
from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.graphtools import largest_component
from routesim_evolve.corpus.schema import (
    FORMAT_GRAPH,
    Channel,
    Graph,
    Node,
    Policy,
    format_scid,
    is_node_id,
    parse_scid,
)

DumpFormat = Literal["lncli", "listchannels"]

_UINT16_MAX: Final = (1 << 16) - 1
_UINT32_MAX: Final = (1 << 32) - 1


class DumpFormatError(ValueError):
    """The dump is not one of the formats the importer reads."""


class ImportReport(BaseModel):
    """What the importer dropped or repaired, by reason."""

    model_config = ConfigDict(extra="forbid")

    format: DumpFormat
    channels_read: int = 0
    dropped_unknown_end: int = 0
    dropped_self_channel: int = 0
    dropped_no_capacity: int = 0
    dropped_conflicting_ends: int = 0
    dropped_duplicate_scid: int = 0
    dropped_bad_scid: int = 0
    duplicate_directions: int = 0
    htlc_max_clamped: int = 0
    htlc_max_dropped: int = 0
    dropped_outside_largest_component: int = 0


class ImportedGraph(BaseModel):
    """An imported graph with where it came from."""

    model_config = ConfigDict(frozen=True)

    graph: Graph
    file: str
    sha256: str
    format: DumpFormat
    largest_component: bool
    report: ImportReport


# ---------------------------------------------------------------------------
# Value parsing shared by both formats


def as_int(value: object, default: int = 0) -> int:
    """Read a number written as a JSON number, a decimal string, or "123msat"."""
    if value is None:
        return default
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        text = value.strip().removesuffix("msat")
        return int(text) if text else default
    raise ValueError(f"not a number: {value!r}")


def _uint(value: int, limit: int) -> int:
    return min(max(value, 0), limit)


def _fit_htlc_max(
    htlc_max: int | None, htlc_min: int, capacity_sat: int, report: ImportReport
) -> int | None:
    """Keep htlc_max within [htlc_min, capacity] as the format requires."""
    if htlc_max is None or htlc_max <= 0:
        return None
    capacity_msat = capacity_sat * 1000
    if htlc_min > capacity_msat:
        report.htlc_max_dropped += 1
        return None
    fitted = min(max(htlc_max, htlc_min), capacity_msat)
    if fitted != htlc_max:
        report.htlc_max_clamped += 1
    return fitted


class PolicyKeys(NamedTuple):
    """Where a dump format keeps each field of a channel direction's policy;
    inbound: its inbound fee's base and rate, where the format has one."""

    base: str
    rate: str
    delay: str
    htlc_min: str
    htlc_max: str
    inbound: tuple[str, str] | None = None


LNCLI_POLICY = PolicyKeys(base="fee_base_msat", rate="fee_rate_milli_msat",
                          delay="time_lock_delta", htlc_min="min_htlc",
                          htlc_max="max_htlc_msat",
                          inbound=("inbound_fee_base_msat", "inbound_fee_rate_milli_msat"))
LISTCHANNELS_POLICY = PolicyKeys(base="base_fee_millisatoshi", rate="fee_per_millionth",
                                 delay="delay", htlc_min="htlc_minimum_msat",
                                 htlc_max="htlc_maximum_msat")


def _policy(
    raw: Mapping[str, Any], keys: PolicyKeys, *, disabled: bool, capacity_sat: int,
    report: ImportReport,
) -> Policy:
    """One direction's policy from a dump's record, its numbers clamped to
    what the wire format can carry."""
    minimum = max(0, as_int(raw.get(keys.htlc_min)))
    htlc_max = raw.get(keys.htlc_max)
    maximum = as_int(htlc_max, default=0) if htlc_max is not None else None
    return Policy(
        fee_base_msat=_uint(as_int(raw.get(keys.base)), _UINT32_MAX),
        fee_rate_ppm=_uint(as_int(raw.get(keys.rate)), _UINT32_MAX),
        cltv_delta=_uint(as_int(raw.get(keys.delay)), _UINT16_MAX),
        htlc_min_msat=minimum,
        htlc_max_msat=_fit_htlc_max(maximum, minimum, capacity_sat, report),
        disabled=disabled,
        inbound_fee_base_msat=_int32(raw, keys.inbound, 0),
        inbound_fee_rate_ppm=_int32(raw, keys.inbound, 1),
    )


def _int32(raw: Mapping[str, Any], keys: tuple[str, str] | None, which: int) -> int:
    """A signed 32-bit field of an inbound fee, clamped; 0 where the format
    has none or the record leaves it out."""
    if keys is None:
        return 0
    return max(-(1 << 31), min(as_int(raw.get(keys[which])), (1 << 31) - 1))


def _channel(
    scid: str, a: str, b: str, capacity_sat: int, policy_a: Policy | None, policy_b: Policy | None
) -> Channel:
    """A channel with the smaller key as node1 (lnd's order), policies following."""
    if a > b:
        a, b, policy_a, policy_b = b, a, policy_b, policy_a
    return Channel(
        scid=scid, node1=a, node2=b, capacity_sat=capacity_sat, policy1=policy_a, policy2=policy_b
    )


def _end_problem(a: str, b: str, known: set[str], report: ImportReport) -> bool:
    """Count and report a channel whose ends are unknown or the same node."""
    if a not in known or b not in known:
        report.dropped_unknown_end += 1
        return True
    if a == b:
        report.dropped_self_channel += 1
        return True
    return False


# ---------------------------------------------------------------------------
# lncli describegraph


def import_lncli(dump: Mapping[str, Any]) -> tuple[Graph, ImportReport]:
    """Convert `lncli describegraph` output into a graph."""
    report = ImportReport(format="lncli")
    nodes = _lncli_nodes(dump.get("nodes") or [])
    known = {n.id for n in nodes}
    channels: dict[int, Channel] = {}
    for edge in dump.get("edges") or []:
        report.channels_read += 1
        channel = _lncli_channel(edge, known, report)
        if channel is None:
            continue
        key = parse_scid(channel.scid)
        if key in channels:
            report.dropped_duplicate_scid += 1
            continue
        channels[key] = channel
    return _graph(nodes, channels), report


def _lncli_nodes(raw: list[Mapping[str, Any]]) -> list[Node]:
    nodes: dict[str, Node] = {}
    for entry in raw:
        key = str(entry.get("pub_key", ""))
        if not is_node_id(key) or key in nodes:
            continue
        features = sorted(int(bit) for bit in (entry.get("features") or {}))
        nodes[key] = Node(id=key, alias=str(entry.get("alias") or ""), features=features)
    return [nodes[k] for k in sorted(nodes)]


def _lncli_channel(
    edge: Mapping[str, Any], known: set[str], report: ImportReport
) -> Channel | None:
    a, b = str(edge.get("node1_pub", "")), str(edge.get("node2_pub", ""))
    if _end_problem(a, b, known, report):
        return None
    capacity = as_int(edge.get("capacity"))
    if capacity <= 0:
        report.dropped_no_capacity += 1
        return None

    def policy(raw: Mapping[str, Any] | None) -> Policy | None:
        if not raw:
            return None
        return _policy(raw, LNCLI_POLICY, disabled=bool(raw.get("disabled", False)),
                       capacity_sat=capacity, report=report)

    scid = format_scid(as_int(edge.get("channel_id")))
    return _channel(
        scid, a, b, capacity, policy(edge.get("node1_policy")), policy(edge.get("node2_policy"))
    )


# ---------------------------------------------------------------------------
# Core Lightning listchannels


def import_listchannels(dump: Mapping[str, Any]) -> tuple[Graph, ImportReport]:
    """Convert Core Lightning `listchannels` output into a graph; nodes are the
    channels' ends."""
    report = ImportReport(format="listchannels")
    by_scid: dict[str, list[Mapping[str, Any]]] = {}
    for entry in dump.get("channels") or []:
        by_scid.setdefault(str(entry.get("short_channel_id", "")), []).append(entry)
    ends = {
        str(e.get(k, ""))
        for entries in by_scid.values()
        for e in entries
        for k in ("source", "destination")
    }
    known = {e for e in ends if is_node_id(e)}
    channels: dict[int, Channel] = {}
    for scid, entries in by_scid.items():
        report.channels_read += 1
        channel = _listchannels_channel(scid, entries, known, report)
        if channel is not None:
            channels[parse_scid(channel.scid)] = channel
    nodes = [Node(id=n) for n in sorted({c.node1 for c in channels.values()}
                                        | {c.node2 for c in channels.values()})]
    return _graph(nodes, channels), report


def _latest_per_direction(
    entries: list[Mapping[str, Any]], report: ImportReport
) -> dict[tuple[str, str], Mapping[str, Any]]:
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in entries:
        direction = (str(entry.get("source", "")), str(entry.get("destination", "")))
        held = latest.get(direction)
        if held is not None:
            report.duplicate_directions += 1
            if as_int(held.get("last_update")) >= as_int(entry.get("last_update")):
                continue
        latest[direction] = entry
    return latest


def _listchannels_capacity(entry: Mapping[str, Any]) -> int:
    if entry.get("satoshis") is not None:
        return as_int(entry["satoshis"])
    return as_int(entry.get("amount_msat")) // 1000


def _listchannels_channel(
    scid: str, entries: list[Mapping[str, Any]], known: set[str], report: ImportReport
) -> Channel | None:
    try:
        parse_scid(scid)
    except ValueError:
        report.dropped_bad_scid += 1
        return None
    latest = _latest_per_direction(entries, report)
    pairs = {tuple(sorted(d)) for d in latest}
    if len(pairs) != 1:
        report.dropped_conflicting_ends += 1
        return None
    a, b = next(iter(pairs))
    if _end_problem(a, b, known, report):
        return None
    capacity = max(_listchannels_capacity(e) for e in latest.values())
    if capacity <= 0:
        report.dropped_no_capacity += 1
        return None

    def policy(source: str, destination: str) -> Policy | None:
        raw = latest.get((source, destination))
        if raw is None:
            return None
        return _policy(raw, LISTCHANNELS_POLICY, disabled=not raw.get("active", True),
                       capacity_sat=capacity, report=report)

    return _channel(scid, a, b, capacity, policy(a, b), policy(b, a))


# ---------------------------------------------------------------------------
# Files


def _graph(nodes: list[Node], channels: dict[int, Channel]) -> Graph:
    return Graph(
        format=FORMAT_GRAPH, nodes=nodes, channels=[channels[k] for k in sorted(channels)]
    )


def detect_format(dump: object) -> DumpFormat:
    if isinstance(dump, Mapping) and "edges" in dump and "nodes" in dump:
        return "lncli"
    if isinstance(dump, Mapping) and "channels" in dump:
        return "listchannels"
    raise DumpFormatError(
        "not an lncli describegraph dump (nodes, edges) nor a listchannels dump (channels)"
    )


def read_dump(path: str | os.PathLike[str]) -> tuple[Any, str]:
    """Parse a JSON dump (gzip if the name ends in .gz); also its sha256."""
    raw = Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    text = gzip.decompress(raw) if os.fspath(path).endswith(".gz") else raw
    return orjson.loads(text), digest


def import_graph_file(
    path: str | os.PathLike[str],
    fmt: Literal["auto", "lncli", "listchannels"] = "auto",
    keep_largest_component: bool = True,
) -> ImportedGraph:
    """Import a gossip dump from a file, by default keeping only the largest
    connected component (payments across components are hopeless by design)."""
    dump, digest = read_dump(path)
    chosen: DumpFormat = detect_format(dump) if fmt == "auto" else fmt
    graph, report = import_lncli(dump) if chosen == "lncli" else import_listchannels(dump)
    if keep_largest_component:
        whole = len(graph.channels)
        graph = largest_component(graph)
        report.dropped_outside_largest_component = whole - len(graph.channels)
    return ImportedGraph(
        graph=graph,
        file=os.fspath(path),
        sha256=digest,
        format=chosen,
        largest_component=keep_largest_component,
        report=report,
    )
