//! routesim-ldk: LDK's production router as a reference in the routesim
//! simulator. One process serves one scenario run over a pipe (protocol.rs):
//! the simulator enters its gossip view once, then plays each payment
//! through LDK's own DefaultRouter (find_route with the ProbabilisticScorer
//! at its default parameters), and reports each path's outcome, from which
//! the scorer and the graph learn as LDK's event handling makes them
//! (lightning-background-processor's update_scorer and
//! handle_network_graph_update). Time is the scenario's virtual clock.

mod failure;
mod graph;
mod payment;
mod protocol;

use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use lightning::bitcoin::hashes::{sha256, Hash, HashEngine};
use lightning::routing::gossip::NetworkGraph;
use lightning::routing::router::{DefaultRouter, Path, Router};
use lightning::routing::scoring::{
    ProbabilisticScorer, ProbabilisticScoringDecayParameters, ProbabilisticScoringFeeParameters,
    ScoreUpdate,
};
use lightning::sign::EntropySource;
use lightning::util::logger::{Logger, Record};

use graph::Nodes;
use payment::Payment;
use protocol::{EndMsg, GraphMsg, HopMsg, PathMsg, PayMsg, Reply, Request, ResultMsg, RouteMsg};

/// LDK's log goes nowhere (the simulator's result is the record), unless
/// ROUTESIM_LDK_TRACE is "log": then to standard error.
pub struct Quiet;

impl Logger for Quiet {
    fn log(&self, record: Record) {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *ON.get_or_init(|| std::env::var("ROUTESIM_LDK_TRACE").is_ok_and(|v| v == "log")) {
            eprintln!("ldk {}: {}", record.level, record.args);
        }
    }
}

static QUIET: Quiet = Quiet;

/// The logger handle every LDK object takes.
pub type Log = &'static Quiet;

type Graph = NetworkGraph<Log>;
type Scorer = ProbabilisticScorer<Arc<Graph>, Log>;
type LdkRouter = DefaultRouter<
    Arc<Graph>,
    Log,
    Arc<Entropy>,
    Arc<RwLock<Scorer>>,
    ProbabilisticScoringFeeParameters,
    Scorer,
>;

/// How often LDK's background processor calls the scorer's time_passed
/// (its SCORER_PERSIST_TIMER), here in virtual seconds.
const DECAY_INTERVAL_S: u64 = 5 * 60;

/// The router's random bytes, from the payment's own seed: each find_route
/// takes the next sha256(seed || counter), so runs are reproducible.
#[derive(Default)]
pub struct Entropy {
    state: Mutex<([u8; 32], u64)>,
}

impl Entropy {
    fn reseed(&self, seed: [u8; 32]) {
        *self.state.lock().unwrap() = (seed, 0);
    }
}

impl EntropySource for Entropy {
    fn get_secure_random_bytes(&self) -> [u8; 32] {
        let mut state = self.state.lock().unwrap();
        let mut engine = sha256::Hash::engine();
        engine.input(&state.0);
        engine.input(&state.1.to_be_bytes());
        state.1 += 1;
        sha256::Hash::from_engine(engine).to_byte_array()
    }
}

/// LDK's routing stack for one scenario run.
struct Bridge {
    nodes: Nodes,
    stamps: graph::Stamps,
    graph: Arc<Graph>,
    scorer: Arc<RwLock<Scorer>>,
    entropy: Arc<Entropy>,
    router: LdkRouter,
    last_decay_s: u64,
    payment: Option<Payment>,
}

impl Bridge {
    fn new(msg: GraphMsg) -> Result<(Bridge, usize), String> {
        let nodes = Nodes::new(&msg.nodes)?;
        let mut stamps = graph::Stamps::new()?;
        let (graph, refused) = graph::network_graph(&msg, &nodes, &mut stamps, &QUIET)?;
        let graph = Arc::new(graph);
        let mut scorer = ProbabilisticScorer::new(
            ProbabilisticScoringDecayParameters::default(),
            graph.clone(),
            &QUIET,
        );
        // The background processor decays the scorer once at start.
        scorer.time_passed(Duration::from_secs(msg.now_s));
        let scorer = Arc::new(RwLock::new(scorer));
        let entropy = Arc::new(Entropy::default());
        let router = DefaultRouter::new(
            graph.clone(),
            &QUIET,
            entropy.clone(),
            scorer.clone(),
            ProbabilisticScoringFeeParameters::default(),
        );
        let bridge = Bridge {
            nodes,
            stamps,
            graph,
            scorer,
            entropy,
            router,
            last_decay_s: msg.now_s,
            payment: None,
        };
        Ok((bridge, refused))
    }

    /// The background processor's timer, on the virtual clock.
    fn clock(&mut self, now_s: u64) {
        if now_s >= self.last_decay_s + DECAY_INTERVAL_S {
            self.scorer
                .write()
                .unwrap()
                .time_passed(Duration::from_secs(now_s));
            self.last_decay_s = now_s;
        }
    }

    fn pay(&mut self, msg: PayMsg) -> Result<(), String> {
        self.clock(msg.now_s);
        let payer = self.nodes.key(msg.source, "source")?;
        let target = self.nodes.key(msg.target, "target")?;
        let peers = msg
            .first_hops
            .iter()
            .enumerate()
            .map(|(i, h)| self.nodes.key(h.peer, &format!("first_hops[{i}].peer")))
            .collect::<Result<Vec<_>, _>>()?;
        let seed: [u8; 32] = graph::decode_hex(&msg.seed)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| "seed: want 64 hex characters".to_string())?;
        self.entropy.reseed(seed);
        trace(|| {
            let outbound: u64 = msg.first_hops.iter().map(|h| h.outbound_msat).sum();
            format!(
				"pay {} msat to node {} (fee limit {}, parts {}, mpp {}, {} first hops with {outbound} msat)",
				msg.amount_msat,
				msg.target,
				msg.fee_limit_msat,
				msg.max_parts,
				msg.mpp,
				msg.first_hops.len()
			)
        });
        self.payment = Some(Payment::new(&msg, payer, target, peers)?);
        Ok(())
    }

    fn route(&mut self, msg: RouteMsg) -> Result<Reply, String> {
        let payment = self.payment.as_mut().ok_or("route: no payment")?;
        if let Some(why) = &payment.over {
            return Ok(Reply {
                no_route: Some(why.clone()),
                ..Reply::default()
            });
        }
        if msg.new_round {
            payment.drop_unsent();
            let params = payment.route_params(msg.amount_msat);
            let first_hops = payment.first_hops();
            let first_hops: Vec<_> = first_hops.iter().collect();
            match self.router.find_route(
                &payment.payer,
                &params,
                Some(&first_hops),
                payment.in_flight(),
            ) {
                Ok(route) => payment.queue_route(route.paths),
                Err(e) => {
                    trace(|| format!("no route for {} msat: {e}", params.final_value_msat));
                    // LDK abandons a payment it finds no route for.
                    let why = format!("LDK: {e}");
                    payment.over = Some(why.clone());
                    return Ok(Reply {
                        no_route: Some(why),
                        ..Reply::default()
                    });
                }
            }
        }
        let nodes = &self.nodes;
        Ok(match payment.next_path() {
            Some((id, path)) => Reply {
                path: Some(path_msg(id, path, nodes)),
                ..Reply::default()
            },
            None => Reply {
                no_route: Some("LDK: this round's route is all sent".into()),
                ..Reply::default()
            },
        })
    }

    fn result(&mut self, msg: ResultMsg) -> Result<(), String> {
        self.clock(msg.now_s);
        let now = Duration::from_secs(msg.now_s);
        let payment = self.payment.as_mut().ok_or("result: no payment")?;
        let path = payment.path(msg.id)?.clone();
        match msg.outcome.as_str() {
            "settled" => {
                self.scorer
                    .write()
                    .unwrap()
                    .payment_path_successful(&path, now);
                payment.settled(msg.id);
            }
            "held" => payment.held(msg.id),
            "failed" => {
                let learned = failure::learnings(&path, msg.code, msg.has_update, msg.source_idx);
                trace(|| {
                    format!(
                        "path {} failed (code {:#x} from {}): {learned:?}",
                        msg.id, msg.code, msg.source_idx
                    )
                });
                if let Some(update) = &learned.network_update {
                    self.graph.handle_network_update(update);
                }
                score_failure(&mut self.scorer.write().unwrap(), &path, &learned, now);
                payment.failed(msg.id, learned.short_channel_id);
                if learned.payment_failed_permanently && payment.over.is_none() {
                    payment.over =
                        Some("LDK: the payment failed for good (recipient rejected)".into());
                }
            }
            other => return Err(format!("result: unknown outcome {other:?}")),
        }
        Ok(())
    }

    /// The end of a payment: an atomic payment's held paths settle with it
    /// (LDK's PaymentPathSuccessful), or are failed back by the receiver's
    /// MPP timeout, from which LDK's scorer learns nothing.
    fn end(&mut self, msg: EndMsg) -> Result<(), String> {
        self.clock(msg.now_s);
        let payment = self.payment.take().ok_or("end: no payment")?;
        if msg.success {
            let mut scorer = self.scorer.write().unwrap();
            for path in payment.held_paths() {
                scorer.payment_path_successful(&path, Duration::from_secs(msg.now_s));
            }
        }
        Ok(())
    }
}

/// The scorer's update for a failed path (update_scorer): the blamed
/// channel's failure, or, when the recipient refused, a path that reached it.
fn score_failure(scorer: &mut Scorer, path: &Path, learned: &failure::Learnings, now: Duration) {
    if let Some(scid) = learned.short_channel_id {
        scorer.payment_path_failed(path, scid, now);
    } else if learned.payment_failed_permanently {
        scorer.probe_successful(path, now);
    }
}

fn path_msg(id: u64, path: &Path, nodes: &Nodes) -> PathMsg {
    let hops = path
        .hops
        .iter()
        .map(|h| HopMsg {
            scid: h.short_channel_id,
            node: nodes.index_of(&h.pubkey),
            fee_msat: h.fee_msat,
            cltv_delta: h.cltv_expiry_delta,
        })
        .collect();
    PathMsg { id, hops }
}

/// Writes a line to standard error when ROUTESIM_LDK_TRACE is set: what
/// the bridge decided, for a person debugging a run.
fn trace(line: impl FnOnce() -> String) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("ROUTESIM_LDK_TRACE").is_some()) {
        eprintln!("routesim-ldk: {}", line());
    }
}

/// Serves requests until standard input ends.
fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut bridge: Option<Bridge> = None;
    for line in input.lines() {
        let reply = handle(&mut bridge, &line?).unwrap_or_else(|e| Reply {
            error: Some(e),
            ..Reply::default()
        });
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

fn handle(bridge: &mut Option<Bridge>, line: &str) -> Result<Reply, String> {
    let request: Request = serde_json::from_str(line).map_err(|e| format!("bad request: {e}"))?;
    if let Request::Graph(msg) = request {
        let (b, refused) = Bridge::new(msg)?;
        *bridge = Some(b);
        return Ok(Reply {
            refused: Some(refused),
            ..Reply::default()
        });
    }
    let b = bridge.as_mut().ok_or("the graph comes first")?;
    match request {
        Request::Graph(_) => unreachable!(),
        Request::Gossip(msg) => {
            let refused = graph::apply_gossip(&b.graph, &msg.channels, &b.nodes, &mut b.stamps)?;
            trace(|| {
                format!(
                    "gossip: {} channels, {refused} updates refused",
                    msg.channels.len()
                )
            });
            Ok(Reply {
                refused: Some(refused),
                ..Reply::default()
            })
        }
        Request::Pay(msg) => b.pay(msg).map(|()| Reply::default()),
        Request::Route(msg) => b.route(msg),
        Request::Result(msg) => b.result(msg).map(|()| Reply::default()),
        Request::End(msg) => b.end(msg).map(|()| Reply::default()),
    }
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    if let Err(e) = serve(stdin.lock(), io::BufWriter::new(stdout.lock())) {
        eprintln!("routesim-ldk: {e}");
        std::process::exit(1);
    }
}
