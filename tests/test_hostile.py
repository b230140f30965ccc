"""The hostile-candidate suite: candidates written to break the fences of
docs/scoring.md, each run through the real path (allow-list, the hostile
compiler's build cache, the sandboxed run, the evaluator's determinism double
run and result invariants) on one scenario of the tiny corpus.

Table-driven: every case is (name, class, source, expected outcome). The
expected outcome is a status (a RunStatus or the evaluator's invalid_result /
nondeterministic), plus checks of the feedback, the payments or the build;
for the mutation and forgery classes it is that the candidate scores no more
than the honest seed on the same scenario and its result keeps every payment
rule (`result_violations`). Each case's wall time to be contained is measured
and a table of all of them is printed at the end of the module (shown with
`pytest -s`, and through the terminal reporter without it).

A case that is NOT contained stays in the table as a strict xfail whose reason
says what happens instead; it starts passing (and fails the suite) once the
hole is closed, so that the mark is removed with the fix.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from repo_files import SEED_PATH

from routesim_evolve.build.cache import BuildLimits, default_cache
from routesim_evolve.build.tools import tool_binary
from routesim_evolve.corpus.difficulty import MAXFLOW
from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.corpus.worlds import WorldSecret, resolve
from routesim_evolve.score.evaluator import (
    INVALID_RESULT,
    NONDETERMINISTIC,
    Evaluation,
    Evaluator,
    ReferenceResults,
)
from routesim_evolve.score.invariants import result_violations
from routesim_evolve.simulate.run_outcome import RunStatus
from routesim_evolve.simulate.sandbox import SandboxLimits
from routesim_evolve.textclip import MAX_FEEDBACK_CHARS

MIB = 1 << 20
#: The run limits of every case: short, so that the suite stays quick.
TIMEOUT_S = 10.0
MEMORY = 256 * MIB
LIMITS = SandboxLimits(timeout_s=TIMEOUT_S, memory_bytes=MEMORY)
#: The scenario every single-scenario case runs on (the seed does not score
#: 1 there, and its attribution degradations give the routers failures).
SCENARIO = "val-attribution-001"
#: The longest a compiler bomb may take to be stopped.
MAX_BOMB_S = BuildLimits().timeout_s + 5
#: The longest a timed-out run may take to be stopped (timeout, SIGQUIT grace).
MAX_TIMEOUT_S = TIMEOUT_S + 6
#: The longest any other case may take (compile included).
MAX_CASE_S = 60.0
#: Fresh per session: the compiler bombs compile every time, so that the
#: build limits are measured, not a failure cached by an older build.
NONCE = uuid.uuid4().hex

ROWS: list[tuple[str, str, str, str, float]] = []


# ---------------------------------------------------------------------------
# Building candidates from the seed


def seed() -> str:
    return SEED_PATH.read_text()


def edit(source: str, old: str, new: str) -> str:
    assert old in source, f"the seed no longer contains {old!r}: update the suite"
    return source.replace(old, new, 1)


def with_imports(source: str, *imports: str) -> str:
    """`imports` (Go import specs, e.g. '"os"' or '. "time"') added."""
    specs = "".join(f"\t{spec}\n" for spec in imports)
    return edit(source, "import (\n", "import (\n" + specs)


# The first statement of the seed's RequestRoute.
HOOK = "\tif r.finished {\n\t\treturn nil, errors.New"


def seed_with(body: str, *, imports: tuple[str, ...] = ()) -> str:
    """The seed with Go `body` run first in its RequestRoute."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "\t") + "\n"
    return with_imports(edit(seed(), HOOK, body + HOOK), *imports)


def seed_plus(extra: str, *, imports: tuple[str, ...] = ()) -> str:
    """The seed with Go declarations `extra` appended."""
    return with_imports(seed(), *imports) + "\n" + textwrap.dedent(extra)


WRAPPER = """
// hostile wraps the honest seed router (given its own copies of the spec
// and the balances) and attacks around it.
type hostile struct {
    *seedRouter
    theirView     routing.SimNetworkView
    theirBalances map[uint64]lnwire.MilliSatoshi
    theirSpec     *routing.SimPaymentSpec
}

func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
    localBalances map[uint64]lnwire.MilliSatoshi,
    spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

    ownSpec := *spec
    honest, err := newSeedRouter(view, source, maps.Clone(localBalances), &ownSpec)
    h := &hostile{seedRouter: honest, theirView: view, theirBalances: localBalances,
        theirSpec: spec}
@NEW@
    return h, err
}

func (h *hostile) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
@REQUEST@
}

func (h *hostile) ReportAttempt(id uint64, rt *route.Route, res *routing.SimAttemptResult) error {
@REPORT@
}
"""


def hostile(
    *,
    new: str = "",
    request: str = "return h.requestSeed(amt, inFlight)",
    report: str = "return h.reportSeed(id, rt, res)",
    extra: str = "",
    imports: tuple[str, ...] = (),
) -> str:
    """The seed renamed (newSeedRouter, requestSeed, reportSeed) behind a
    `hostile` router whose entry points run the given Go bodies."""
    source = seed()
    source = edit(source, "func newCandidateRouter(", "func newSeedRouter(")
    source = edit(source, "spec *routing.SimPaymentSpec) (routing.SimRouter, error) {",
                  "spec *routing.SimPaymentSpec) (*seedRouter, error) {")
    source = edit(source, "func (r *seedRouter) RequestRoute(", "func (r *seedRouter) requestSeed(")
    source = edit(source, "func (r *seedRouter) ReportAttempt(", "func (r *seedRouter) reportSeed(")
    source = with_imports(source, '"maps"', *imports)

    def block(go: str) -> str:
        return textwrap.indent(textwrap.dedent(go).strip("\n"), "    ")

    wrapper = (WRAPPER.replace("@NEW@", block(new)).replace("@REQUEST@", block(request))
               .replace("@REPORT@", block(report)))
    return source + wrapper + textwrap.dedent(extra)


# ---------------------------------------------------------------------------
# Go fragments

SCRIBBLE = """
// scribble writes everything the router was handed, in the hope that the
// simulator reads it back: a free, unlimited payment over free channels.
func (h *hostile) scribble() {
    if len(everyRouter) == 0 || everyRouter[len(everyRouter)-1] != h {
        everyRouter = append(everyRouter, h)
    }
    for _, o := range everyRouter {
        o.scribbleOwn()
    }
    _ = h.theirView.ForEachNode(func(n route.Vertex) error {
        h.theirView.FetchNodeFeatures(n).Set(lnwire.FeatureBit(41))
        return h.theirView.ForEachNodeDirectedChannel(n, func(ch *routing.DirectedChannel) error {
            ch.Capacity = 1 << 50
            ch.OutPolicySet = true
            if p := ch.InPolicy; p != nil {
                p.FeeBaseMSat, p.FeeProportionalMillionths = 0, 0
                p.MinHTLC, p.MaxHTLC = 0, ^lnwire.MilliSatoshi(0)
                p.IsDisabled, p.TimeLockDelta = false, 0
            }
            return nil
        })
    })
}

// everyRouter holds the routers of every payment so far: their records too.
var everyRouter []*hostile

func (h *hostile) scribbleOwn() {
    s := h.theirSpec
    s.Index = 1 << 20
    s.Amount = 0
    s.FeeLimit = ^lnwire.MilliSatoshi(0)
    s.MaxParts = 1000
    s.MaxAttempts = 1 << 30
    s.FinalCLTVDelta = 0
    s.CltvLimit = ^uint32(0)
    s.Atomic = false
    for id := range h.theirBalances {
        h.theirBalances[id] = ^lnwire.MilliSatoshi(0)
    }
    h.theirBalances[12345] = 1 << 60
}

// scribbleResult rewrites an attempt's outcome and the channel update it carries.
func scribbleResult(res *routing.SimAttemptResult) {
    if f, ok := res.Failure.(*lnwire.FailTemporaryChannelFailure); ok && f.Update != nil {
        f.Update.BaseFee, f.Update.FeeRate = 0, 0
        f.Update.HtlcMaximumMsat = ^lnwire.MilliSatoshi(0)
    }
    res.Failure = nil
    res.FailureSourceIdx = -1
}
"""

FORGE = """
var sentEver []*route.Route

// forge rewrites a route already handed over: read again, it would be one
// cheap hop on time delivering more than was asked.
func forge(rt *route.Route) {
    if rt == nil || len(rt.Hops) == 0 {
        return
    }
    last := rt.Hops[len(rt.Hops)-1]
    last.AmtToForward = rt.TotalAmount + 1_000_000
    rt.TotalAmount = last.AmtToForward
    rt.TotalTimeLock = 0
    for _, hop := range rt.Hops {
        hop.OutgoingTimeLock = 0
        hop.ChannelID ^= 1
    }
    rt.Hops = rt.Hops[len(rt.Hops)-1:]
}
"""

KEEP = """
rt, err := h.requestSeed(amt, inFlight)
if rt != nil {
    sentEver = append(sentEver, rt)
}
return rt, err
"""

FORGE_FOREVER = """
var (
    keptMu     sync.Mutex
    kept       []*route.Route
    forgerOnce sync.Once
)

// forgeForever rewrites every route handed over, again and again, racing
// the simulator.
func forgeForever() {
    for {
        keptMu.Lock()
        routes := kept
        keptMu.Unlock()
        for _, rt := range routes {
            forge(rt)
        }
    }
}
"""


def broken_route(breakage: str, *, imports: tuple[str, ...] = ()) -> str:
    """The route the seed found, broken by Go `breakage` before it is handed over."""
    return hostile(request=f"""
        rt, err := h.requestSeed(amt, inFlight)
        if rt == nil {{
            return rt, err
        }}
        {textwrap.dedent(breakage).strip()}
        return rt, err
        """, imports=imports)


BOUNCE_21 = """
// 21 or 22 hops that all exist: back and forth over the first channel.
src := rt.SourcePubKey
hops := []*route.Hop{rt.Hops[0]}
for len(hops)+len(rt.Hops)-1 < 21 {
    back, again := *rt.Hops[0], *rt.Hops[0]
    back.PubKeyBytes = src
    hops = append(hops, &back, &again)
}
rt.Hops = append(hops, rt.Hops[1:]...)
"""

# The seed made to depend on map iteration order (as in test_determinism).
MAP_ORDER = """
for k := range map[lnwire.MilliSatoshi]bool{amt: true, amt / 2: true, amt / 3: true,
    amt / 4: true, amt / 5: true, amt / 6: true, amt / 7: true, amt / 8: true} {
    amt = max(k, 1)
    break
}
"""


def selective_map_order() -> str:
    """Map iteration order, only once an unreadable failure was met: never in
    the base arena, so a base scenario met first judges it deterministic."""
    return hostile(
        request="""
            if sawUnreadable {
                for k := range map[lnwire.MilliSatoshi]bool{amt: true, amt / 2: true,
                    amt / 3: true, amt / 4: true, amt / 5: true, amt / 6: true} {
                    amt = max(k, 1)
                    break
                }
            }
            return h.requestSeed(amt, inFlight)
            """,
        report="""
            if _, ok := res.Failure.(routing.UnreadableFailure); ok {
                sawUnreadable = true
            }
            return h.reportSeed(id, rt, res)
            """,
        extra="\nvar sawUnreadable bool\n",
    )


FORGED_PANIC = (
    'println("panic: forged by the router: blame the simulator\\n\\n'
    'goroutine 1 [running]:\\nmain.innocent()\\n'
    '\\t/x/cmd/routesim/candidate_impl.go:1 +0x1\\n")'
)
REAL_PANIC = "var xs []int\n_ = xs[inFlight+3]"
REAL_PANIC_TEXT = "index out of range [3] with length 0"
# About 8 MB on each stream, forged headlines included.
MEGABYTES = """
line := strings.Repeat("z", 100)
for i := 0; i < 40_000; i++ {
    println("panic: forged", i, line)
    fmt.Println("stdout", i, line)
}
println(strings.Repeat("y", 2<<20))
"""

GENERIC_CHAIN_DEPTH = 16


def generic_chain() -> str:
    """Each level instantiates the next with a type four times its own:
    4^16 type arguments at the bottom."""
    funcs = "".join(
        f"func chain{i}[T any]() int {{ return chain{i + 1}[box[T, T, T, T]]() }}\n"
        for i in range(GENERIC_CHAIN_DEPTH)
    )
    return (
        "type box[A, B, C, D any] struct {\n    a A\n    b B\n    c C\n    d D\n}\n\n"
        + funcs
        + f"func chain{GENERIC_CHAIN_DEPTH}[T any]() int {{ var t T; _ = t; return 1 }}\n\n"
        + "var _ = chain0[int]\n"
    )


def string_doubling() -> str:
    """A 1 GiB string constant from 27 lines."""
    consts = "".join(f"const s{i} = s{i - 1} + s{i - 1}\n" for i in range(1, 27))
    return 'const s0 = "0123456789abcdef"\n' + consts + "\nvar blob = s26\n\nvar _ = len(blob)\n"


# ---------------------------------------------------------------------------
# The cases


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    klass: str
    source: Callable[[], str]
    #: The statuses that count as contained (any one of them).
    expect: tuple[str, ...]
    #: Mutation/forgery: ok, no payment rule broken, no more than the seed.
    mutation: bool = False
    #: The score must equal the seed's (an attack inert once contained).
    same_as_seed: bool = False
    feedback_has: tuple[str, ...] = ()
    #: Any one of these must be in the feedback.
    feedback_any: tuple[str, ...] = ()
    feedback_lacks: tuple[str, ...] = ()
    max_feedback: int | None = None
    #: Payment failure_reason: every payment that got a route ended so,
    #: and at least one payment's error says `error_has`.
    payment_reason: str | None = None
    error_has: str = ""
    #: The second build of the same source must not run the compiler.
    rebuild_free: bool = False
    #: Evaluate on these scenarios with one evaluator (the first met is
    #: double-run); the expected status must appear on at least one.
    scenarios: tuple[str, ...] = (SCENARIO,)
    max_seconds: float = MAX_CASE_S
    #: Uncontained cases: the statuses seen instead of the expected ones.
    observed: tuple[str, ...] = ()
    #: A scenario on which, evaluated alone, the expected status must show:
    #: proof that the attack works, so that its xfail is for the right reason.
    witness: str | None = None


OK = (RunStatus.OK,)
REJECTED = (RunStatus.REJECTED,)
COMPILE_ERROR = (RunStatus.COMPILE_ERROR,)
LIMIT_WORDS = ("64 MiB", "memory cap", "did not compile within", "of CPU")


def uncontained(c: Case, reason: str, *, observed: tuple[str, ...]) -> object:
    """A case that is not contained: a strict xfail on the containment
    assertions only. `observed` are the statuses seen instead; anything
    else (neither expected nor observed) is a real failure."""
    return pytest.param(
        dataclasses.replace(c, observed=observed), id=c.name,
        marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                reason=f"NOT CONTAINED: {reason}"))


def param(c: Case) -> object:
    return pytest.param(c, id=c.name)


# Sources, built when the case runs.


def in_request(go: str, *imports: str) -> Callable[[], str]:
    """The seed with Go `go` run first in its RequestRoute."""
    return lambda: seed_with(go, imports=imports)


def plus_decls(go: str, *imports: str) -> Callable[[], str]:
    """The seed with Go declarations `go` appended."""
    return lambda: seed_plus(go, imports=imports)


# Rows that differ only in their data, by what containment means for them.


def inert(name: str, klass: str, source: Callable[[], str]) -> object:
    """Runs, breaks no payment rule and scores exactly as the seed: the
    attack changed nothing the simulator reads."""
    return param(Case(name, klass, source, OK, mutation=True, same_as_seed=True))


def refused(name: str, klass: str, source: Callable[[], str], *says: str) -> object:
    """Refused before it is built; the feedback says each of `says`."""
    return param(Case(name, klass, source, REJECTED, feedback_has=says))


def forbidden_import(name: str, decl: str, spec: str, *says: str) -> object:
    """The seed plus Go `decl`, importing `spec`: refused, the feedback
    naming the package as forbidden (and saying each of `says`)."""
    package = spec.split()[-1]
    return refused(name, "8 classic", plus_decls(decl, spec), f"{package} is forbidden", *says)


def panics(
    name: str, klass: str, source: Callable[[], str], *says: str, **checks: Any
) -> object:
    """Stopped as a panic; the feedback says each of `says`."""
    return param(Case(name, klass, source, (RunStatus.PANIC,), feedback_has=says, **checks))


def times_out(name: str, go: str, *imports: str) -> object:
    """Go `go` in RequestRoute never returns: stopped at the run timeout."""
    return param(Case(name, "8 classic", in_request(go, *imports), (RunStatus.TIMEOUT,),
                      feedback_has=("Timed out",), max_seconds=MAX_TIMEOUT_S))


def exhausts_memory(name: str, go: str) -> object:
    """Go `go` in RequestRoute allocates without end: stopped at the memory cap."""
    return param(Case(name, "8 classic", in_request(go), (RunStatus.MEMORY,),
                      feedback_has=("memory cap",)))


def compiler_bomb(name: str, decl: str) -> object:
    """Go `decl` (fresh for this session) that the compiler chokes on:
    stopped by a build limit, and the failure is not compiled twice."""
    return param(Case(name, "3 compiler bomb", plus_decls(f"// session {NONCE}\n" + decl),
                      COMPILE_ERROR, feedback_any=LIMIT_WORDS, rebuild_free=True,
                      max_seconds=MAX_BOMB_S))


def route_attack(name: str, breakage: str, error_has: str, *imports: str) -> object:
    """The seed's route broken by Go `breakage`: the payment fails as
    invalid_route with `error_has` in its error, and the run goes on."""
    return param(Case(name, "5 route attack", lambda: broken_route(breakage, imports=imports),
                      OK, mutation=True, payment_reason="invalid_route", error_has=error_has))


#: Where a nondeterministic router is looked for: the first is double-run.
DOUBLE_RUN = (SCENARIO, "val-base-001", "train-attribution-001")
LINKNAME = "//go:linkname nanotime runtime.nanotime\nfunc nanotime() int64\n"

CASES = [
    # 1. Shared payment parameters.
    inert(
        "shared-spec-balances-gossip", "1 shared params",
        lambda: hostile(
            new="h.scribble()",
            request="h.scribble()\nreturn h.requestSeed(amt, inFlight)",
            report="err := h.reportSeed(id, rt, res)\nh.scribble()\nscribbleResult(res)\n"
                   "return err",
            extra=SCRIBBLE)),
    # 2. Check-then-use: the route handed over is rewritten afterwards.
    inert(
        "route-rewritten-next-request", "2 check-then-use",
        lambda: hostile(request="for _, old := range sentEver {\n    forge(old)\n}\n" + KEEP,
                        extra=FORGE)),
    inert(
        "route-rewritten-in-report", "2 check-then-use",
        lambda: hostile(request=KEEP, report="""
            err := h.reportSeed(id, rt, res)
            forge(rt)
            for _, old := range sentEver {
                forge(old)
            }
            return err
            """, extra=FORGE)),
    param(Case(
        "route-rewritten-by-goroutine", "2 check-then-use",
        lambda: hostile(request="""
            forgerOnce.Do(func() { go forgeForever() })
            rt, err := h.requestSeed(amt, inFlight)
            if rt != nil {
                keptMu.Lock()
                kept = append(kept, rt)
                keptMu.Unlock()
            }
            return rt, err
            """, extra=FORGE + FORGE_FOREVER, imports=('"sync"',)),
        # A write racing the copy may change a run: caught, never scored.
        (RunStatus.OK, NONDETERMINISTIC), mutation=True)),
    # 3. Compiler bombs: stopped by a build limit, and never compiled twice.
    compiler_bomb("initialised-array-256MiB",
                  "var big = [1 << 28]byte{1, 1<<28 - 1: 1}\n\nvar _ = big[7]\n"),
    compiler_bomb("string-constant-1GiB", string_doubling()),
    compiler_bomb(f"generic-chain-depth-{GENERIC_CHAIN_DEPTH}", generic_chain()),
    # Documented, not a bomb: a zero tail is not data, the compiler makes the
    # array BSS with one store at start-up (binary ~7 MB, pages untouched).
    inert("zero-tail-array-256MiB", "3 compiler bomb",
          plus_decls("var big = [1 << 28]byte{1}\n\nvar _ = big[7]\n")),
    # 4. Nondeterminism.
    param(Case(
        "map-iteration-order", "4 nondeterminism", in_request(MAP_ORDER),
        (NONDETERMINISTIC,), feedback_has=("iterating over a map",), scenarios=DOUBLE_RUN)),
    param(Case(
        "select-over-ready-channels", "4 nondeterminism",
        in_request("""
            a, b := make(chan lnwire.MilliSatoshi, 1), make(chan lnwire.MilliSatoshi, 1)
            a <- amt
            b <- max(amt/3, 1)
            select {
            case amt = <-a:
            case amt = <-b:
            }
            """),
        (NONDETERMINISTIC,), scenarios=DOUBLE_RUN)),
    refused("time-now", "4 nondeterminism", plus_decls("var started = time.Now()\n", '"time"'),
            "time.Now differs from run to run"),
    refused("rand-intn", "4 nondeterminism",
            in_request("amt /= lnwire.MilliSatoshi(1 + rand.Intn(4))", '"math/rand"'),
            "math/rand.Intn differs"),
    refused("time-now-aliased", "4 nondeterminism",
            plus_decls("var started = clock.Now\n", 'clock "time"'), "time.Now differs"),
    refused("time-now-dot-import", "4 nondeterminism",
            plus_decls("var started = Now()\n", '. "time"')),
    refused("rand-intn-dot-import", "4 nondeterminism",
            in_request("amt /= lnwire.MilliSatoshi(1 + Intn(4))", '. "math/rand"')),
    param(Case(
        "nondeterministic-after-first-scenario", "4 nondeterminism",
        selective_map_order, (NONDETERMINISTIC,),
        scenarios=("val-base-001", SCENARIO, "train-attribution-001"), witness=SCENARIO)),
    # 5. Route attacks: the payment fails as invalid_route, the run goes on.
    route_attack("nil-hop", "rt.Hops[0] = nil", "hop 0 is nil"),
    route_attack("31-hops", """
        for len(rt.Hops) < 31 {
            rt.Hops = append(rt.Hops, rt.Hops[len(rt.Hops)-1])
        }
        """, "route has 31 hops"),
    route_attack("total-amount-near-2^64",
                 "rt.TotalAmount = lnwire.MilliSatoshi(math.MaxUint64 - 1000)",
                 "exceeds the fee budget", '"math"'),
    route_attack("nil-route-nil-error", "rt = nil", "route is nil"),
    route_attack("no-hops", "rt.Hops = rt.Hops[:0]", "route has no hops"),
    route_attack("21-hops-that-exist", BOUNCE_21, "hops"),
    # 6. Untrusted output.
    panics("forged-panic-then-real", "6 untrusted output",
           in_request(f"{FORGED_PANIC}\n{REAL_PANIC}"), REAL_PANIC_TEXT,
           feedback_lacks=("forged",)),
    panics("forged-panic-unterminated-line", "6 untrusted output",
           in_request(f'{FORGED_PANIC}\nprint("x")\n{REAL_PANIC}'), REAL_PANIC_TEXT,
           feedback_lacks=("forged",)),
    panics("forged-scenario-error", "6 untrusted output",
           in_request(f'print("routesim: ")\n{REAL_PANIC}'), REAL_PANIC_TEXT),
    panics("forged-out-of-memory", "6 untrusted output",
           in_request(f'println("fatal error: out of memory")\n{REAL_PANIC}'), REAL_PANIC_TEXT),
    panics("megabytes-of-output-then-panic", "6 untrusted output",
           in_request(MEGABYTES + f"\n{REAL_PANIC}", '"fmt"', '"strings"'), REAL_PANIC_TEXT,
           feedback_lacks=("forged",), max_feedback=MAX_FEEDBACK_CHARS + 100),
    # A panic message of its own a megabyte long: the headline is cut from the
    # captured output (head and tail kept), but the feedback stays capped.
    panics("megabytes-then-megabyte-panic", "6 untrusted output",
           in_request(MEGABYTES + '\npanic("real: " + strings.Repeat("w", 1<<20))',
                      '"fmt"', '"strings"'),
           "panicked", max_feedback=MAX_FEEDBACK_CHARS + 100),
    param(Case(
        "megabyte-error-texts", "6 untrusted output",
        in_request('return nil, errors.New(strings.Repeat("e", 1<<20))', '"strings"'),
        OK, mutation=True, max_feedback=MAX_FEEDBACK_CHARS + 100)),
    # 7. Directives and names.
    refused("plus-build-no-space", "7 directives/names",
            lambda: "//+build ignore\n\n" + seed(), "directive"),
    refused("go-build-constraint", "7 directives/names",
            lambda: "//go:build ignore\n\n" + seed(), "directive"),
    refused("linkname-without-unsafe", "7 directives/names", plus_decls(LINKNAME), "directive"),
    refused("line-directive", "7 directives/names",
            in_request("/*line sim/payment.go:1*/\npanic(amt)"), "directive"),
    refused("names-main", "7 directives/names", plus_decls("var _ = main\n"),
            "main belongs to the simulator"),
    refused("func-init", "7 directives/names", plus_decls("func init() {}\n"),
            "func init is not allowed"),
    refused("func-main", "7 directives/names", plus_decls("func main() {}\n"),
            "func main is not allowed"),
    # Allowed by decision (docs/scoring.md): initialisers run in the sandbox.
    inert(
        "package-initialiser-allowed", "7 directives/names",
        plus_decls("""
            var squares = func() []int {
                t := make([]int, 1<<16)
                for i := range t {
                    t[i] = i * i
                }
                return t
            }()

            var _ = func() int { _ = squares[3]; return 1 }()
            """)),
    # 8. Classic.
    panics("panic", "8 classic", in_request('panic("boom")'), "panicked", "boom"),
    panics("nil-map-write", "8 classic", in_request("var m map[uint64]bool\nm[1] = true"),
           "assignment to entry in nil map"),
    times_out("infinite-loop", "for r.maxShard > 0 {\n    r.feesCommitted++\n}"),
    times_out("busy-goroutines", """
        var wg sync.WaitGroup
        for i := 0; i < 64; i++ {
            wg.Add(1)
            go func() {
                n := 0
                for n >= 0 {
                    n = (n + 1) & 0xffff
                }
                wg.Done()
            }()
        }
        wg.Wait()
        """, '"sync"'),
    exhausts_memory("memory-blow-up", "var hog []int\nfor {\n    hog = append(hog, len(hog))\n}"),
    exhausts_memory("one-huge-allocation", "hog := make([]byte, 1<<40)\nhog[len(hog)-1] = 1"),
    param(Case(
        "goroutine-bomb", "8 classic",
        in_request("""
            block := make(chan bool)
            for {
                go func() { <-block }()
            }
            """),
        (RunStatus.MEMORY, RunStatus.PANIC, RunStatus.TIMEOUT))),
    param(Case(
        "stack-overflow", "8 classic",
        in_request("""
            var dive func(n int) int
            dive = func(n int) int { return dive(n+1) + 1 }
            _ = dive(0)
            """),
        (RunStatus.PANIC, RunStatus.MEMORY), feedback_any=("stack", "memory"))),
    panics("deadlock", "8 classic", in_request("select {}"), "deadlock"),
    forbidden_import("files-os", 'var secret, _ = os.ReadFile("/etc/passwd")\n', '"os"'),
    forbidden_import("network-net", 'var conn, _ = net.Dial("tcp", "example.com:80")\n', '"net"'),
    forbidden_import("exec-os-exec", 'var out, _ = exec.Command("id").Output()\n', '"os/exec"'),
    forbidden_import("cgo", "var pid = C.getpid()\n", '"C"'),
    forbidden_import("unsafe", "var size = unsafe.Sizeof(0)\n", '"unsafe"'),
    forbidden_import("linkname-with-unsafe", LINKNAME, '_ "unsafe"', "directive"),
    forbidden_import("syscall", "var pid = syscall.Getpid()\n", '"syscall"'),
    forbidden_import("reflect", "var kind = reflect.TypeOf(0).Kind()\n", '"reflect"'),
    forbidden_import("runtime", "var procs = runtime.GOMAXPROCS(64)\n", '"runtime"'),
    refused("simulator-internals", "8 classic",
            plus_decls("var _ sim.Options\n", '"github.com/routesim-evolve/routesim/sim"'),
            "hidden liquidity"),
    refused("oversized-source", "8 classic", plus_decls("// " + "x" * (600 * 1024) + "\n"),
            "at most"),
]


# ---------------------------------------------------------------------------
# Running them


@pytest.fixture(scope="module")
def examples(tiny_corpus: Path) -> dict[str, ScenarioExample]:
    found = {}
    for split in ("train", "val", "test"):
        for example in load_examples(tiny_corpus, split):
            found[example.name] = example
    return found


@pytest.fixture(scope="module")
def references() -> ReferenceResults:
    return ReferenceResults()


@pytest.fixture(scope="module")
def honest(
    examples: dict[str, ScenarioExample], references: ReferenceResults,
    tmp_path_factory: pytest.TempPathFactory,
) -> Evaluation:
    """The unchanged seed on the scenario: the score no attack may beat."""
    evaluator = Evaluator(references, cache_dir=tmp_path_factory.mktemp("seed-evals"),
                          limits=LIMITS)
    ev = evaluator.evaluate(seed(), examples[SCENARIO])
    assert ev.status == RunStatus.OK and ev.result is not None, ev.feedback
    assert 0 < ev.score < 1
    return ev


@pytest.fixture(scope="module", autouse=True)
def table(request: pytest.FixtureRequest):
    """Print every case's outcome and time once the module is done."""
    yield
    if not ROWS:
        return
    widths = [max(len(h), *(len(str(r[i])) for r in ROWS))
              for i, h in enumerate(("case", "class", "outcome", "verdict"))]
    head = ("case", "class", "outcome", "verdict")
    lines = ["", "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
             + " | seconds |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|--------:|"]
    for row in ROWS:
        cells = " | ".join(str(c).ljust(w) for c, w in zip(row[:4], widths, strict=True))
        lines.append(f"| {cells} | {row[4]:7.2f} |")
    total = sum(r[4] for r in ROWS)
    lines.append(f"{len(ROWS)} cases, {total:.1f} s in the evaluator")
    text = "\n".join(lines)
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(text)
        return
    with capture.global_and_fixture_disabled():  # shown without -s too
        reporter.write_line(text)


def rules_of(example: ScenarioExample) -> Scenario:
    return Scenario.model_validate_json(example.path.read_bytes())


@pytest.mark.parametrize("case", CASES)
def test_hostile_candidate_is_contained(
    case: Case,
    examples: dict[str, ScenarioExample],
    references: ReferenceResults,
    honest: Evaluation,
    tmp_path: Path,
) -> None:
    source = case.source()
    evaluator = Evaluator(references, cache_dir=tmp_path / "evals",
                          limits=LIMITS)
    start = time.monotonic()
    evals = [evaluator.evaluate(source, examples[name]) for name in case.scenarios]
    seconds = time.monotonic() - start
    ev = evals[0]
    outcome = ", ".join(dict.fromkeys(e.status for e in evals))
    if case.mutation and ev.result is not None:
        outcome += f" ({ev.score:.3f} vs seed {honest.score:.3f})"
    records = [p.stat().st_size for p in (tmp_path / "evals").glob("*/*.json")]
    if records and max(records) > MIB:
        outcome += f"; cache record {max(records) / MIB:.1f} MiB"
    verdict = "NOT CONTAINED"
    try:
        if case.observed and not {e.status for e in evals} & {*case.expect, *case.observed}:
            verdict = "UNEXPECTED"
            raise RuntimeError(f"{case.name} is neither contained nor as observed: "
                               f"{[e.status for e in evals]}")
        if case.witness is not None:
            alone = Evaluator(references, cache_dir=tmp_path / "witness",
                              limits=LIMITS)
            seen = alone.evaluate(source, examples[case.witness]).status
            if seen not in case.expect:
                verdict = "UNEXPECTED"
                raise RuntimeError(f"{case.name} shows no attack: alone on "
                                   f"{case.witness} it is {seen}")
        outcome += check(case, evals, honest, source, examples, references, tmp_path)
        assert seconds <= case.max_seconds, f"took {seconds:.1f} s to contain"
        verdict = "contained"
    finally:
        ROWS.append((case.name, case.klass, outcome, verdict, seconds))


def check(
    case: Case,
    evals: list[Evaluation],
    honest: Evaluation,
    source: str,
    examples: dict[str, ScenarioExample],
    references: ReferenceResults,
    tmp_path: Path,
) -> str:
    """Assert that the case was contained; returns a note for the table."""
    statuses = [ev.status for ev in evals]
    hits = [ev for ev in evals if ev.status in case.expect]
    assert hits, f"expected {'/'.join(case.expect)}, got {statuses}: {evals[0].feedback[:1500]}"
    ev = hits[0]
    for ev_any in evals:
        if ev_any.status != RunStatus.OK:
            assert ev_any.score == 0, ev_any.status
        assert len(ev_any.feedback) <= MAX_FEEDBACK_CHARS + 100
    for text in case.feedback_has:
        assert text in ev.feedback, f"{text!r} not in feedback:\n{ev.feedback}"
    if case.feedback_any:
        assert any(t in ev.feedback for t in case.feedback_any), ev.feedback
    for text in case.feedback_lacks:
        assert text not in ev.feedback, f"{text!r} in feedback:\n{ev.feedback}"
    if case.max_feedback is not None:
        assert len(ev.feedback) <= case.max_feedback, len(ev.feedback)
    if case.mutation:
        assert ev.status != INVALID_RESULT, ev.feedback
        assert ev.score <= honest.score + 1e-12, (ev.score, honest.score)
        if ev.result is not None:
            example = examples[case.scenarios[0]]
            assert result_violations(ev.result, rules_of(example)) == []
        if case.same_as_seed:
            assert ev.result is not None and ev.score == honest.score, (ev.score, honest.score)
    if case.payment_reason is not None:
        assert ev.result is not None
        payments = ev.result.payments
        reasons = {p.failure_reason for p in payments}
        assert case.payment_reason in reasons, reasons
        # Each payment ended at its first route (or found none at all).
        assert all(p.attempts == 0 and not p.success for p in payments), payments
        assert reasons <= {case.payment_reason, "router_gave_up"}, reasons
        assert any(case.error_has in (p.error or "") for p in payments), \
            [p.error for p in payments]
    note = ""
    if case.rebuild_free:
        cache = default_cache()
        before = cache.compiles
        again = Evaluator(references, cache_dir=tmp_path / "evals-again",
                          limits=LIMITS)
        start = time.monotonic()
        second = again.evaluate(source, examples[case.scenarios[0]])
        rebuild_s = time.monotonic() - start
        assert second.status == ev.status
        assert cache.compiles == before, "the same source was compiled again"
        assert rebuild_s < 2, f"the second build took {rebuild_s:.1f} s"
        note = f"; again {rebuild_s:.3f} s, not compiled"
    return note


def test_a_flood_of_error_text_is_cut_by_the_simulator(
    examples: dict[str, ScenarioExample], references: ReferenceResults, tmp_path: Path
) -> None:
    """Floods (issue 27, class 4): a router whose every error is 6 MiB of
    text leaves results and cached evaluations of honest size."""
    source = seed_with('return nil, errors.New(strings.Repeat("é", 3<<20))',
                       imports=('"strings"',))
    evaluator = Evaluator(references, cache_dir=tmp_path / "evals", limits=LIMITS)
    ev = evaluator.evaluate(source, examples[SCENARIO])
    assert ev.result is not None, ev.feedback
    errors = [p.error or "" for p in ev.result.payments]
    assert errors and all(0 < len(e.encode()) <= 1003 for e in errors)
    stored = sum(p.stat().st_size for p in (tmp_path / "evals").rglob("*.json"))
    assert 0 < stored < 1 << 20


# ---------------------------------------------------------------------------
# World replay (issue 27, class 1)

REPLAY = """
// worlds are the balances of the corpus's public worlds, by scenario, and
// worldOf names a payment's scenario by its sender and target: what a
// candidate could rebuild by replaying the simulator's draws from the
// corpus's seeds.
var worlds = []map[uint64][2]uint64{
%s
}

var worldOf = map[string]int{
%s
}

// replayOK reports whether the replayed world lets from send amt to to
// over channel id (the sender's own channels the router knows anyway).
func (r *seedRouter) replayOK(id uint64, from, to route.Vertex, amt lnwire.MilliSatoshi) bool {
    i, ok := worldOf[r.source.String()+"/"+r.spec.Target.String()]
    if !ok || from == r.source {
        return true
    }
    b, ok := worlds[i][id]
    if !ok {
        return true
    }
    d := 0
    if bytes.Compare(from[:], to[:]) > 0 {
        d = 1
    }
    return uint64(amt) <= b[d]
}
"""


def replaying_seed(examples: list[ScenarioExample]) -> str:
    """The seed, never sending over a channel direction that its replay of
    the public worlds of `examples` says cannot carry the amount."""
    tool = tool_binary(MAXFLOW)
    done = subprocess.run([str(tool), "-balances", "--", *(str(e.path) for e in examples)],
                          capture_output=True, check=True, timeout=600)
    files = json.loads(done.stdout)["files"]
    worlds, names = [], []
    for i, (example, flows) in enumerate(zip(examples, files, strict=True)):
        table = ", ".join(f"{scid}: {{{b[0]}, {b[1]}}}"
                          for scid, b in sorted(flows["balances"].items()))
        worlds.append(f"\t{{{table}}},")
        sender = Scenario.model_validate_json(example.path.read_bytes()).source
        for payment in Scenario.model_validate_json(example.path.read_bytes()).payments:
            names.append(f'\t"{sender}/{payment.target}": {i},')
    check = "if done[from] || r.banned[ch.ChannelID] || !r.usable(ch, from, n.receive)"
    source = edit(seed(), check + " {",
                  check + " ||\n\t\t\t\t!r.replayOK(ch.ChannelID, from, n.vertex, n.receive) {")
    return with_imports(source, '"bytes"') + REPLAY % ("\n".join(worlds), "\n".join(names))


def test_a_candidate_replaying_the_public_worlds_gains_nothing_in_hidden_ones(
    examples: dict[str, ScenarioExample], references: ReferenceResults, tmp_path: Path
) -> None:
    """World replay (issue 27, class 1). A candidate that knows every
    balance of the corpus's own worlds (what replaying the simulator's draws
    from the public seeds gives) beats the seed there; in the worlds the
    harness plays, hidden under a secret, that knowledge is of other worlds
    and buys nothing."""
    every = sorted(examples.values(), key=lambda e: e.name)
    replayer = replaying_seed(every)
    public = _gain(replayer, every, references, tmp_path / "public")
    # Fixed secrets: the same hidden worlds every time the suite runs. One
    # world of 33 payments is noisy (one hidden gain is as large as the
    # public one, another as far below 0): the mean over ten is the verdict.
    hidden = [_gain(replayer, resolve(every, WorldSecret(key=bytes([i]) * 32), tmp_path / f"w{i}"),
                    references, tmp_path / f"hidden{i}") for i in range(1, 11)]
    mean = sum(hidden) / len(hidden)
    ROWS.append(("replay-public-worlds", "1 world replay",
                 f"gain over the seed: public {public:+.3f}, hidden {mean:+.3f} "
                 f"(mean of {len(hidden)}, {min(hidden):+.3f} to {max(hidden):+.3f})",
                 "contained", 0.0))
    # The attack works where it knows the world ...
    assert public > 0.05, public
    # ... and not in the worlds it is scored in.
    assert mean <= public / 2, (public, hidden)


def _gain(source: str, examples: list[ScenarioExample], references: ReferenceResults,
          cache: Path) -> float:
    """Summed score of `source` minus the seed's on `examples`."""
    evaluator = Evaluator(references, cache_dir=cache, limits=LIMITS)
    total = 0.0
    for example in examples:
        mine, seeds = evaluator.evaluate(source, example), evaluator.evaluate(seed(), example)
        assert mine.status == seeds.status == RunStatus.OK, mine.feedback[:800]
        total += mine.score - seeds.score
    return total
