"""A regtest network of real nodes: one btcd, one lnd per node, on 127.0.0.1.

Everything lives in a fresh temporary folder and listens on free ports of
127.0.0.1 only. Whatever starts a process stops it, on every exit path: the
`Regtest` context manager stops its processes when the block ends, by
error or Ctrl-C too, and every process is started with the kernel's
parent-death signal, so that even a killed Python takes its nodes along.

How coins come about: lnd's wallet creates its keys at its first start
(`--noseedbackup`), so btcd is started once without a mining address, the
first node's address is asked for, and btcd is started again (same data,
same ports) mining to it; lnd reconnects by itself. btcd's regtest activates
segwit only after three version-bits windows of 144 blocks, so the first
node mines `SEGWIT_BLOCKS` before anything is spent.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from routesim_evolve.realnet.build import RealBinaries

#: Blocks mined at the start: segwit active (432) and the first coinbases
#: mature (100 more).
SEGWIT_BLOCKS: Final = 550

#: The RPC credentials of btcd, which listens on 127.0.0.1 only.
_RPC_USER, _RPC_PASS = "realnet", "realnet"

#: How long a node may take to answer, start or sync.
READY_TIMEOUT_S: Final = 60.0


class RealnetError(RuntimeError):
    """A node did not start, answer or reach the state asked of it; the
    message names the node and ends with its last log lines."""


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the parent dies (Linux's
    PR_SET_PDEATHSIG), so a killed harness leaves no node behind."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)


@dataclass
class _Process:
    name: str
    args: list[str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = self.log.open("ab")
        try:
            self.popen = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True,
                                          preexec_fn=_die_with_parent)
        finally:
            out.close()

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after grace_s; waits for the process."""
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()

    def tail(self, lines: int = 8) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class LndNode:
    """One running lnd: its folder, its ports and its identity."""

    name: str
    dir: Path
    p2p_port: int
    rpc_port: int
    lncli: Path
    process: _Process
    pubkey: str = ""

    @property
    def rpc_address(self) -> str:
        return f"127.0.0.1:{self.rpc_port}"

    @property
    def tls_cert(self) -> Path:
        return self.dir / "tls.cert"

    @property
    def macaroon(self) -> Path:
        return self.dir / "data" / "chain" / "bitcoin" / "regtest" / "admin.macaroon"

    def cli_args(self) -> list[str]:
        return [str(self.lncli), f"--lnddir={self.dir}", "--network=regtest",
                f"--rpcserver={self.rpc_address}"]

    def cli(self, *args: str, timeout: float = 60.0) -> dict[str, Any]:
        """Run lncli against this node and return its JSON answer."""
        done = subprocess.run([*self.cli_args(), *args], capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode != 0:
            raise RealnetError(f"{self.name}: lncli {' '.join(args)}: "
                               f"{(done.stderr or done.stdout).strip()}")
        try:
            answer = json.loads(done.stdout)
        except json.JSONDecodeError as exc:
            raise RealnetError(f"{self.name}: lncli {args[0]} printed no JSON: "
                               f"{done.stdout[:200]!r}") from exc
        if not isinstance(answer, dict):
            raise RealnetError(f"{self.name}: lncli {args[0]} printed {type(answer).__name__}, "
                               "not a JSON object")
        return answer


@dataclass
class Regtest:
    """A regtest network: `with Regtest(binaries) as net: net.add_node("a")…`."""

    bins: RealBinaries
    keep: bool = False
    say: Callable[[str], None] | None = None
    root: Path = field(init=False)
    nodes: dict[str, LndNode] = field(default_factory=dict, init=False)
    _btcd: _Process | None = field(default=None, init=False)
    _btcd_ports: tuple[int, int] = field(default=(0, 0), init=False)

    def __enter__(self) -> Self:
        self.root = Path(tempfile.mkdtemp(prefix="realnet-"))
        self._btcd_ports = (free_port(), free_port())
        try:
            self._start_btcd(mining_address=None)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for node in self.nodes.values():
            node.process.stop()
        if self._btcd is not None:
            self._btcd.stop()
        if self.keep:
            self._tell(f"realnet: kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def pids(self) -> list[int]:
        """Every process this network started (for checks that none is left)."""
        procs = [n.process for n in self.nodes.values()] + ([self._btcd] if self._btcd else [])
        return [p.popen.pid for p in procs if p.popen is not None]

    def peak_rss_mib(self) -> float:
        """The peak resident memory of every process running now, summed
        (each one's VmHWM), in MiB."""
        total_kib = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total_kib += int(line.split()[1])
        return total_kib / 1024

    # -- btcd -------------------------------------------------------------

    @property
    def _btcd_dir(self) -> Path:
        return self.root / "btcd"

    def _start_btcd(self, mining_address: str | None) -> None:
        rpc, p2p = self._btcd_ports
        d = self._btcd_dir
        d.mkdir(exist_ok=True)
        args = [str(self.bins.btcd), "--regtest", f"--datadir={d / 'data'}",
                f"--logdir={d / 'logs'}", f"--configfile={d / 'btcd.conf'}",
                f"--rpcuser={_RPC_USER}", f"--rpcpass={_RPC_PASS}",
                f"--rpclisten=127.0.0.1:{rpc}", f"--listen=127.0.0.1:{p2p}",
                f"--rpccert={d / 'rpc.cert'}", f"--rpckey={d / 'rpc.key'}", "--txindex",
                # btcd's defaults (10 clients, 25 websockets) are fewer than
                # a dozen lnd nodes hold; past them lnd's connection flaps.
                "--rpcmaxclients=500", "--rpcmaxwebsockets=500",
                "--rpcmaxconcurrentreqs=500"]
        if mining_address:
            args.append(f"--miningaddr={mining_address}")
        (d / "btcd.conf").touch()
        self._btcd = _Process("btcd", args, d / "out.log")
        self._btcd.start()
        self._wait("btcd", lambda: self.btcctl("getblockcount") is not None, self._btcd)

    def btcctl(self, *args: str) -> str | None:
        """btcctl's answer, or None when btcd does not answer (yet)."""
        rpc, _ = self._btcd_ports
        d = self._btcd_dir
        done = subprocess.run(
            [str(self.bins.btcctl), "--regtest", f"--rpcuser={_RPC_USER}",
             f"--rpcpass={_RPC_PASS}", f"--rpcserver=127.0.0.1:{rpc}",
             f"--rpccert={d / 'rpc.cert'}", f"--configfile={d / 'btcd.conf'}", *args],
            capture_output=True, text=True, timeout=120, check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def mine(self, blocks: int) -> None:
        """Mine blocks (to the first node) and wait until every node sees them."""
        if self.btcctl("generate", str(blocks)) is None:
            raise RealnetError(f"btcd did not mine {blocks} blocks\n{self._btcd_tail()}")
        height = int(self.btcctl("getblockcount") or 0)
        for node in self.nodes.values():
            self._wait(node.name, lambda n=node: _synced_at(n, height), node.process)

    def _btcd_tail(self) -> str:
        return self._btcd.tail() if self._btcd else ""

    # -- lnd --------------------------------------------------------------

    def add_node(self, name: str, extra_args: Sequence[str] = ()) -> LndNode:
        """Start an lnd on the network (with lnd flags `extra_args`) and wait
        until it answers."""
        rpc, _ = self._btcd_ports
        d = self.root / name
        d.mkdir()
        node = LndNode(name=name, dir=d, p2p_port=free_port(), rpc_port=free_port(),
                       lncli=self.bins.lncli, process=_Process(name, [], d / "out.log"))
        node.process.args = [
            str(self.bins.lnd), f"--lnddir={d}", f"--configfile={d / 'lnd.conf'}",
            "--bitcoin.regtest", "--bitcoin.node=btcd",
            f"--btcd.rpchost=127.0.0.1:{rpc}", f"--btcd.rpcuser={_RPC_USER}",
            f"--btcd.rpcpass={_RPC_PASS}", f"--btcd.rpccert={self._btcd_dir / 'rpc.cert'}",
            f"--listen=127.0.0.1:{node.p2p_port}", f"--rpclisten=127.0.0.1:{node.rpc_port}",
            "--norest", "--noseedbackup", "--nobootstrap", f"--alias={name}",
            # Gossip out at once, not after lnd's 90-s trickle delay: the
            # network waits for every channel to reach the sender's graph.
            "--trickledelay=50",
            # lnd relays new gossip to three peers only ("active" syncers);
            # in a small sparse graph that leaves some updates short of the
            # sender, so every peer is an active syncer here.
            "--numgraphsyncpeers=100",
            *extra_args,
        ]
        (d / "lnd.conf").touch()
        self.nodes[name] = node
        node.process.start()
        self._wait(name, lambda: _answers(node), node.process)
        node.pubkey = node.cli("getinfo")["identity_pubkey"]
        return node

    def restart(self, node: LndNode) -> None:
        """Stop node's lnd and start it again on the same folder and ports."""
        node.process.stop()
        node.process.start()
        self._wait(node.name, lambda: _answers(node), node.process)

    def fund(self) -> None:
        """Give the first node mature coins: btcd is started again mining
        to it (see the module docstring), and segwit is activated."""
        first = next(iter(self.nodes.values()))
        address = first.cli("newaddress", "p2wkh")["address"]
        if self._btcd is not None:
            self._btcd.stop()
        self._start_btcd(mining_address=address)
        # lnd's connection to a restarted btcd sometimes never recovers (its
        # log ends at "Received unexpected reply: null", and the node then
        # neither syncs nor forwards): the node is restarted too.
        self.restart(first)
        self._tell(f"realnet: mining {SEGWIT_BLOCKS} blocks to {first.name}")
        self.mine(SEGWIT_BLOCKS)
        self._wait(first.name, lambda: int(first.cli("walletbalance")["confirmed_balance"]) > 0,
                   first.process)
        # lnd's coin selection finds nothing among hundreds of coinbase
        # outputs ("insufficient funds"), while a sweep spends them: so
        # the node sweeps them into one output of its own first.
        own = first.cli("newaddress", "p2wkh")["address"]
        first.cli("sendcoins", f"--addr={own}", "--sweepall", "--force")
        self.mine(1)

    def send_coins(self, sender: LndNode, to: Sequence[LndNode], sat_each: int) -> None:
        """Pay each node sat_each on chain from sender, and confirm it."""
        for node in to:
            address = node.cli("newaddress", "p2wkh")["address"]
            sender.cli("sendcoins", f"--addr={address}", f"--amt={sat_each}", "--force")
        self.mine(6)
        for node in to:
            self._wait(node.name,
                       lambda n=node: int(n.cli("walletbalance")["confirmed_balance"]) >= sat_each,
                       node.process)

    def connect(self, a: LndNode, b: LndNode) -> None:
        """Connect a to b as peers, unless they are."""
        peers = {p["pub_key"] for p in a.cli("listpeers").get("peers", [])}
        if b.pubkey not in peers:
            a.cli("connect", f"{b.pubkey}@127.0.0.1:{b.p2p_port}")

    def open_channel(self, a: LndNode, b: LndNode, capacity_sat: int, push_sat: int) -> None:
        """Connect a to b and open a channel funded by a, pushing push_sat to b;
        the caller mines to confirm it (several channels share blocks)."""
        self.connect(a, b)
        a.cli("openchannel", f"--node_key={b.pubkey}", f"--local_amt={capacity_sat}",
              f"--push_amt={push_sat}")

    def wait_active(self, node: LndNode, channels: int) -> None:
        """Wait until node has this many active channels."""
        self._wait(node.name, lambda: int(node.cli("getinfo")["num_active_channels"]) >= channels,
                   node.process)

    # -- waiting ----------------------------------------------------------

    def wait_for(self, node: LndNode, ready: Callable[[], bool],
                 timeout_s: float = READY_TIMEOUT_S) -> None:
        """Wait until ready() holds, failing with node's log if node exits
        or the time runs out."""
        self._wait(node.name, ready, node.process, timeout_s)

    def _wait(self, name: str, ready: Callable[[], bool], process: _Process,
              timeout_s: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.popen is not None and process.popen.poll() is not None:
                raise RealnetError(f"{name} exited ({process.popen.returncode}):\n{process.tail()}")
            try:
                if ready():
                    return
            except RealnetError:
                pass
            if time.monotonic() > deadline:
                raise RealnetError(f"{name} not ready after {timeout_s:.0f} s:\n{process.tail()}")
            time.sleep(0.2)

    def _tell(self, message: str) -> None:
        if self.say:
            self.say(message)


def _answers(node: LndNode) -> bool:
    if not node.macaroon.is_file():
        return False
    return bool(node.cli("getinfo", timeout=10).get("identity_pubkey"))


def _synced_at(node: LndNode, height: int) -> bool:
    info = node.cli("getinfo", timeout=10)
    return bool(info.get("synced_to_chain")) and int(info.get("block_height", 0)) >= height
