"""The agents' minibatch evaluation: a server outside the jail.

An agent may score its edit before it hands it in. It runs
`eval_minibatch.sh`, which drops the file into a spool folder and prints
the answer this server, in the harness, writes back beside it: per
scenario of the iteration's minibatch, the score and status beside the
production routers' (lnd's and LDK's) and the full feedback (a build or
rule failure with its reason, never a bare 0). A folder, not a socket:
codex's own sandbox forbids `connect`.

Nothing the agent could write is trusted on the way. The script, its
client and the spool folder are the agent's to change: all it can do is
leave files there. The server takes a request as hostile_fs takes any file
an agent could have written: without following links, only a regular file
with one name, at most `MAX_REQUEST_BYTES` of it; it refuses bytes that are
not Go source text, and writes its answer to a new file under a name
nobody could guess before renaming it (never through a name the agent
made). Each request is handled on its own: a folder, FIFO or link planted
under any name, or a failure of the harness, costs that request an answer
and is logged; the server goes on. It scores the file as
it scores any candidate: the trusted build and sandbox, the run's own hidden
worlds and the references' results, none of which the agent can read. Its evaluations
are kept in the run's `agent-evals/` folder, apart from the search's, and
each is logged to the run's log. One request at a time, at most
`MAX_REQUESTS` per proposal, bounds what an agent can spend.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from routesim_evolve.build.source import MAX_SOURCE_BYTES, NotSourceText, source_text
from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.hostile_fs import Folder, HostileEntry
from routesim_evolve.score.axes import score_result
from routesim_evolve.score.evaluator import Evaluation, Evaluator, References

log = logging.getLogger(__name__)

#: The most a request may hold.
MAX_REQUEST_BYTES = MAX_SOURCE_BYTES
#: How many evaluations one proposal's agent may ask for.
MAX_REQUESTS = 12
#: The run dir's folder of agents' evaluations (never read by the search).
AGENT_EVALS = "agent-evals"
# How often the server looks for requests.
_POLL_S = 0.1
# How many names of the spool one look reads, and after how many times the
# allowance the server stops reading requests at all.
_LISTED = 4096
_IGNORED_PAST = 2
# A request's name: REQUEST.go in, REQUEST.out back.
_REQUEST = re.compile(r"^([A-Za-z0-9_-]{1,64})\.go$")

# The client the script runs: the standard library only, no site packages.
CLIENT = """import os, sys, time
spool, path = sys.argv[1], sys.argv[2]
name = "req-%d-%d" % (os.getpid(), time.monotonic_ns())
data = open(path, "rb").read()
part = os.path.join(spool, name + ".part")
with open(part, "wb") as f:
    f.write(data)
os.rename(part, os.path.join(spool, name + ".go"))
answer = os.path.join(spool, name + ".out")
while not os.path.exists(answer):
    time.sleep(0.2)
with open(answer, encoding="utf-8", errors="replace") as f:
    sys.stdout.write(f.read())
os.remove(answer)
"""


class MinibatchEvaluations:
    """Scores agents' files on named train scenarios, as the run scores."""

    def __init__(
        self,
        evaluator: Evaluator,
        references: References,
        train: Sequence[ScenarioExample],
        *,
        workers: int = 1,
        max_requests: int = MAX_REQUESTS,
    ) -> None:
        self._evaluator = evaluator
        self._references = references
        self._train = {e.name: e for e in train}
        self._workers = workers
        self.max_requests = max_requests

    def report(self, raw: bytes, names: Sequence[str]) -> str:
        """What the agent reads: each scenario's score and feedback, or why
        the file could not be scored."""
        try:
            source = source_text(raw, "the file sent")
        except NotSourceText as exc:
            log.warning("agent eval: refused: %s", exc)
            return f"Not scored: {exc}. Send candidate_impl.go as UTF-8 Go source.\n"
        chosen = [self._train[n] for n in names if n in self._train]
        evaluations = self._evaluator.evaluate_many(source, chosen, workers=self._workers)
        return "".join(self._section(e) for e in evaluations) + _mean(evaluations)

    def _section(self, ev: Evaluation) -> str:
        example = self._train[ev.scenario]
        references = ", ".join(f"{name} {score_result(r).score:.3f}"
                               for name, r in self._references.results(example).items())
        if ev.status == "ok":
            log.info("agent eval: %s scored %.4f", ev.scenario, ev.score)
        else:
            head = " ".join(ev.feedback.split())[:400]
            log.warning("agent eval: %s: %s: %s", ev.scenario, ev.status, head)
        return (f"## {ev.scenario} ({ev.arena}): score {ev.score:.3f} [{ev.status}]; "
                f"{references}\n"
                f"{ev.feedback.strip()}\n\n")


def _mean(evaluations: Sequence[Evaluation]) -> str:
    mean = sum(e.score for e in evaluations) / max(1, len(evaluations))
    return f"mean score {mean:.3f} on {len(evaluations)} scenario(s)\n"


@contextmanager
def serving(scorer: MinibatchEvaluations, names: Sequence[str]) -> Iterator[Path]:
    """A spool folder whose requests are scored on `names` until the block
    ends; yields the folder, for the agent to write."""
    with tempfile.TemporaryDirectory(prefix="routesim-eval-") as tmp:
        spool = Path(tmp)
        stop = threading.Event()
        thread = threading.Thread(target=_serve, args=(spool, scorer, list(names), stop),
                                  name="agent-eval", daemon=True)
        thread.start()
        try:
            yield spool
        finally:
            # A request being scored finishes first.
            stop.set()
            thread.join()


def _serve(spool: Path, scorer: MinibatchEvaluations, names: list[str],
           stop: threading.Event) -> None:
    with Folder(spool) as folder:
        handled: set[str] = set()
        while not stop.wait(_POLL_S):
            for request in _requests(folder, handled, scorer.max_requests):
                handled.add(request)
                _handle(folder, request, scorer, names, served=len(handled))


def _handle(folder: Folder, request: str, scorer: MinibatchEvaluations, names: list[str],
            *, served: int) -> None:
    """Answer one request. Whatever the agent planted, and whatever fails
    in the harness, ends here: the request is answered or logged, and the
    server goes on."""
    try:
        if served > scorer.max_requests:
            answer = (f"Not scored: this proposal has used its {scorer.max_requests} "
                      "evaluations. Hand in your best file.\n")
        else:
            answer = _answer(folder, request, scorer, names)
        _write_answer(folder, request, answer)
    except Exception:
        log.exception("agent eval: request %s failed", request)


def _requests(folder: Folder, handled: set[str], allowance: int) -> list[str]:
    """The new requests waiting, oldest name first; none once twice the
    allowance has been asked (what an agent sends past it is not read)."""
    if len(handled) >= _IGNORED_PAST * allowance:
        return []
    return sorted(m.group(1) for entry in folder.names(_LISTED)
                  if (m := _REQUEST.match(entry)) and m.group(1) not in handled)


def _answer(folder: Folder, request: str, scorer: MinibatchEvaluations,
            names: list[str]) -> str:
    try:
        raw = _take(folder, f"{request}.go")
    except HostileEntry as exc:
        log.warning("agent eval: refused %s: %s", request, exc)
        return f"Not scored: {exc}\n"
    # Whatever goes wrong in scoring is the harness's: the agent gets one
    # line, the run's log the whole error.
    try:
        return scorer.report(raw, names)
    except Exception:
        log.exception("agent eval failed")
        return "Not scored: the harness failed to score it (see the run's log).\n"


def _take(folder: Folder, name: str) -> bytes:
    """A request's bytes, removed from the spool: a plain file (no link,
    no FIFO, no folder), at most MAX_REQUEST_BYTES of it."""
    try:
        return folder.read(name, MAX_REQUEST_BYTES)
    finally:
        with suppress(HostileEntry):
            folder.remove(name)


def _write_answer(folder: Folder, request: str, answer: str) -> None:
    """Write the answer to a new file under a name nobody could have
    guessed (so nothing planted is written through), then give it its
    name; an answer that cannot be given its name is logged and dropped."""
    part = f".answer-{request}-{secrets.token_hex(8)}"
    try:
        folder.create(part, answer.encode())
        os.rename(part, f"{request}.out", src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
    except OSError as exc:
        log.warning("agent eval: cannot answer %s: %s", request, exc)
        with suppress(HostileEntry):
            folder.remove(part)
