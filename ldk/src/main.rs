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

/// ROUTESIM_LDK_TRACE, read once: unset, the bridge is silent; set, it
/// prints what it decides to standard error; "log", LDK's own log as well.
fn trace_setting() -> Option<&'static str> {
    static SETTING: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SETTING
        .get_or_init(|| std::env::var("ROUTESIM_LDK_TRACE").ok())
        .as_deref()
}

/// LDK's log goes nowhere (the simulator's result is the record), unless
/// ROUTESIM_LDK_TRACE is "log": then to standard error.
pub struct Quiet;

impl Logger for Quiet {
    fn log(&self, record: Record) {
        if trace_setting() == Some("log") {
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
            let hops = msg.first_hops.len();
            format!(
                "pay {} msat to node {} (fee limit {}, parts {}, mpp {}, {hops} first hops \
                 with {outbound} msat)",
                msg.amount_msat, msg.target, msg.fee_limit_msat, msg.max_parts, msg.mpp
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
    if trace_setting().is_some() {
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
        let (nodes, channels) = (msg.nodes.len(), msg.channels.len());
        let (b, refused) = Bridge::new(msg)?;
        trace(|| format!("graph: {nodes} nodes, {channels} channels, {refused} messages refused"));
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

#[cfg(test)]
mod tests {
    use super::*;
    use lightning::bitcoin::secp256k1::{PublicKey, Secp256k1, SecretKey};
    use serde_json::{json, Value};

    const NOW_S: u64 = 1_767_225_600;
    const HEIGHT: u64 = 800_000;
    const CLTV_LIMIT: u64 = HEIGHT + 2_016;
    const FINAL_CLTV: u64 = 40;

    /// Plays the requests through serve and returns its answers, one per
    /// request.
    fn run(requests: &[Value]) -> Vec<Value> {
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let mut output = Vec::new();
        serve(input.as_bytes(), &mut output).unwrap();
        let replies: Vec<Value> = String::from_utf8(output)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), requests.len(), "one answer a request");
        replies
    }

    fn real_id(i: u8) -> String {
        let secret = SecretKey::from_slice(&[i; 32]).unwrap();
        let key = PublicKey::from_secret_key(&Secp256k1::signing_only(), &secret);
        key.serialize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A made-up id off the curve, which the bridge re-keys.
    fn synthetic_id() -> String {
        (1u32..)
            .map(|i| format!("03{i:064x}"))
            .find(|id| PublicKey::from_slice(&graph::decode_hex(id).unwrap()).is_err())
            .unwrap()
    }

    fn policy(base: u32, ppm: u32, cltv: u16, disabled: bool) -> Value {
        json!({"disabled": disabled, "cltv_delta": cltv, "htlc_min_msat": 1000,
               "htlc_max_msat": null, "fee_base_msat": base, "fee_ppm": ppm})
    }

    fn channel(scid: u64, node1: usize, node2: usize, p1: Value, p2: Value) -> Value {
        json!({"scid": scid, "node1": node1, "node2": node2, "capacity_sat": 1_000_000,
               "policies": [p1, p2]})
    }

    /// Sender 0 pays 3 over 0-1-3 (node 1 charges 1000 msat + 100 ppm and
    /// 40 blocks toward 3) or 0-2-3, whose 2->3 side is cheaper but
    /// disabled.
    fn graph_request() -> Value {
        json!({"op": "graph", "now_s": NOW_S,
        "nodes": [real_id(1), synthetic_id(), real_id(2), real_id(3)],
        "channels": [
            channel(1, 0, 1, policy(0, 0, 40, false), policy(0, 0, 40, false)),
            channel(2, 1, 3, policy(1_000, 100, 40, false), policy(5, 5, 40, false)),
            channel(3, 0, 2, policy(0, 0, 40, false), policy(0, 0, 40, false)),
            channel(4, 3, 2, policy(5, 5, 40, false), policy(0, 0, 10, true)),
        ]})
    }

    fn pay_request(amount_msat: u64) -> Value {
        json!({"op": "pay", "now_s": NOW_S + 10, "height": HEIGHT, "source": 0, "target": 3,
        "amount_msat": amount_msat, "fee_limit_msat": 1_000_000, "max_parts": 16,
        "cltv_limit": CLTV_LIMIT, "final_cltv": FINAL_CLTV, "mpp": true,
        "seed": "11".repeat(32),
        "first_hops": [
            {"scid": 1, "peer": 1, "capacity_sat": 1_000_000, "outbound_msat": 500_000_000u64},
            {"scid": 3, "peer": 2, "capacity_sat": 1_000_000, "outbound_msat": 500_000_000u64},
        ]})
    }

    /// A one-part payment of 1000 msat from node 0 to node 3 without first
    /// hops, with the fields of `fix` written over it: the request the
    /// refusal cases spoil one field of.
    fn small_pay(fix: Value) -> Value {
        let mut pay = json!({"op": "pay", "now_s": NOW_S, "height": HEIGHT, "source": 0,
            "target": 3, "amount_msat": 1000, "fee_limit_msat": 10, "max_parts": 1,
            "cltv_limit": CLTV_LIMIT, "final_cltv": 40, "mpp": false, "seed": "00".repeat(32),
            "first_hops": []});
        for (field, value) in fix.as_object().expect("fix is an object") {
            pay[field] = value.clone();
        }
        pay
    }

    /// graph, a payment of `amount_msat` and its first route, then `then`:
    /// how a served payment starts.
    fn paying(amount_msat: u64, then: &[Value]) -> Vec<Value> {
        let mut requests = vec![
            graph_request(),
            pay_request(amount_msat),
            route_request(amount_msat, true),
        ];
        requests.extend_from_slice(then);
        requests
    }

    fn route_request(amount_msat: u64, new_round: bool) -> Value {
        json!({"op": "route", "amount_msat": amount_msat, "new_round": new_round})
    }

    fn result_request(id: u64, outcome: &str, code: u16, source_idx: i64) -> Value {
        json!({"op": "result", "id": id, "now_s": NOW_S + 12, "outcome": outcome, "code": code,
            "has_update": false, "source_idx": source_idx})
    }

    fn error_of(reply: &Value) -> &str {
        reply["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error in {reply}"))
    }

    /// graph, pay, route: LDK's path goes over the enabled side, with the
    /// fee and delta node 1 announced, and delivers the amount within the
    /// cltv limit; the payment then settles and ends.
    #[test]
    fn serve_routes_by_the_policies() {
        const AMOUNT: u64 = 10_000_000;
        let replies = run(&paying(
            AMOUNT,
            &[
                route_request(AMOUNT, false),
                result_request(0, "settled", 0, -1),
                json!({"op": "end", "now_s": NOW_S + 12, "success": true}),
            ],
        ));
        assert_eq!(replies[0], json!({"refused": 0}));
        assert_eq!(replies[1], json!({}));
        let path = &replies[2]["path"];
        assert_eq!(path["id"], 0, "{}", replies[2]);
        let hops = path["hops"].as_array().unwrap();
        assert_eq!(hops.len(), 2, "{path}");
        let fee = 1_000 + AMOUNT * 100 / 1_000_000;
        assert_eq!(
            hops[0],
            json!({"scid": 1, "node": 1, "fee_msat": fee, "cltv_delta": 40})
        );
        assert_eq!(
            (&hops[1]["scid"], &hops[1]["node"], &hops[1]["fee_msat"]),
            (&json!(2), &json!(3), &json!(AMOUNT))
        );
        // The final delta with LDK's shadow offset, within the limit
        // from the next block.
        let final_delta = hops[1]["cltv_delta"].as_u64().unwrap();
        assert!(final_delta >= FINAL_CLTV, "{path}");
        assert!(HEIGHT + 1 + 40 + final_delta <= CLTV_LIMIT, "{path}");
        // The round's route was one path.
        assert!(
            replies[3]["no_route"]
                .as_str()
                .unwrap()
                .contains("all sent"),
            "{}",
            replies[3]
        );
        assert_eq!(replies[4], json!({}));
        assert_eq!(replies[5], json!({}));
    }

    /// Requests out of order or malformed get an error and the bridge
    /// answers the next ones.
    #[test]
    fn serve_errors() {
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            (
                "route before the graph",
                vec![route_request(1_000, true)],
                "the graph comes first",
            ),
            (
                "pay before the graph",
                vec![pay_request(1_000)],
                "the graph comes first",
            ),
            (
                "unknown op",
                vec![graph_request(), json!({"op": "fly"})],
                "bad request",
            ),
            ("no op", vec![json!({"amount_msat": 1})], "bad request"),
            (
                "unknown field",
                vec![
                    graph_request(),
                    json!({"op": "route", "amount_msat": 1,
                "new_round": true, "extra": 1}),
                ],
                "bad request",
            ),
            (
                "route without a payment",
                vec![graph_request(), route_request(1_000, true)],
                "no payment",
            ),
            (
                "result without a payment",
                vec![graph_request(), result_request(0, "failed", 0, -1)],
                "no payment",
            ),
            (
                "result for an unknown id",
                vec![
                    graph_request(),
                    pay_request(1_000_000),
                    route_request(1_000_000, true),
                    result_request(42, "failed", 0x1007, 1),
                ],
                "not in flight",
            ),
            (
                "result for a path not yet handed out",
                vec![
                    graph_request(),
                    pay_request(1_000_000),
                    result_request(0, "settled", 0, -1),
                ],
                "not in flight",
            ),
            (
                "unknown outcome",
                vec![
                    graph_request(),
                    pay_request(1_000_000),
                    route_request(1_000_000, true),
                    result_request(0, "lost", 0, -1),
                ],
                "unknown outcome",
            ),
            (
                "unknown target",
                vec![graph_request(), small_pay(json!({"target": 9}))],
                "target",
            ),
            (
                "bad seed",
                vec![graph_request(), small_pay(json!({"seed": "00"}))],
                "seed",
            ),
            (
                "cltv limit not above the height",
                vec![graph_request(), small_pay(json!({"cltv_limit": HEIGHT}))],
                "cltv_limit",
            ),
            (
                "end without a payment",
                vec![
                    graph_request(),
                    json!({"op": "end", "now_s": NOW_S, "success": false}),
                ],
                "no payment",
            ),
            (
                "not json",
                vec![graph_request(), json!("route")],
                "bad request",
            ),
        ];
        for (name, mut requests, want) in cases {
            // After the error, the bridge still answers.
            requests.push(json!({"op": "gossip", "channels": []}));
            let replies = run(&requests);
            let n = replies.len();
            let err = error_of(&replies[n - 2]);
            assert!(err.contains(want), "{name}: {err:?} does not say {want:?}");
            for (i, r) in replies[..n - 2].iter().enumerate() {
                assert!(r.get("error").is_none(), "{name}: request {i}: {r}");
            }
            let graph_first = requests[0]["op"] == "graph";
            if graph_first {
                assert_eq!(replies[n - 1], json!({"refused": 0}), "{name}");
            } else {
                assert!(
                    error_of(&replies[n - 1]).contains("the graph comes first"),
                    "{name}"
                );
            }
        }
    }

    /// The recipient's incorrect_or_unknown_payment_details ends the
    /// payment for LDK: no route after it, whatever is asked.
    #[test]
    fn serve_recipient_refusal_ends_the_payment() {
        const AMOUNT: u64 = 10_000_000;
        let first = run(&paying(AMOUNT, &[]));
        let hops = first[2]["path"]["hops"].as_array().unwrap().len() as i64;
        let replies = run(&paying(
            AMOUNT,
            &[
                result_request(0, "failed", 0x400f, hops),
                route_request(AMOUNT, true),
                route_request(AMOUNT, false),
                json!({"op": "end", "now_s": NOW_S + 20, "success": false}),
            ],
        ));
        assert!(replies[2]["path"].is_object(), "{}", replies[2]);
        assert_eq!(replies[3], json!({}));
        for r in &replies[4..6] {
            let why = r["no_route"]
                .as_str()
                .unwrap_or_else(|| panic!("no no_route in {r}"));
            assert!(why.contains("failed for good"), "{why}");
        }
        assert_eq!(replies[6], json!({}));
    }

    /// A temporary channel failure from node 1 on the 1->3 channel is
    /// retried without it: over the other side, which is disabled, so
    /// LDK finds no route; once gossip enables that side, the next
    /// payment goes over it.
    #[test]
    fn serve_retries_without_the_blamed_channel() {
        const AMOUNT: u64 = 10_000_000;
        let enable = json!({"op": "gossip", "channels": [
            channel(4, 3, 2, policy(5, 5, 40, false), policy(0, 0, 10, false))]});
        let replies = run(&paying(
            AMOUNT,
            &[
                json!({"op": "result", "id": 0, "now_s": NOW_S + 12, "outcome": "failed",
                       "code": 0x1007, "has_update": true, "source_idx": 1}),
                route_request(AMOUNT, true),
                json!({"op": "end", "now_s": NOW_S + 14, "success": false}),
                enable,
                pay_request(AMOUNT),
                route_request(AMOUNT, true),
            ],
        ));
        assert_eq!(replies[2]["path"]["hops"][1]["scid"], 2, "{}", replies[2]);
        assert_eq!(replies[3], json!({}));
        assert!(
            replies[4]["no_route"]
                .as_str()
                .unwrap()
                .starts_with("LDK: "),
            "{}",
            replies[4]
        );
        assert_eq!(replies[6], json!({"refused": 0}));
        let hops = &replies[8]["path"]["hops"];
        assert_eq!(
            (&hops[0]["scid"], &hops[0]["node"]),
            (&json!(3), &json!(2)),
            "{}",
            replies[8]
        );
        assert_eq!(hops[0]["fee_msat"], 0);
        assert_eq!(hops[0]["cltv_delta"], 10);
        assert_eq!((&hops[1]["scid"], &hops[1]["node"]), (&json!(4), &json!(3)));
    }
}
