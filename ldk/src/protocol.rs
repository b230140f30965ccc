//! The messages between the simulator (Go, package ldkref) and this bridge:
//! one JSON object per line each way, a request on standard input and its
//! answer on standard output. docs/ldk-reference.md is their one
//! description; the Go side's types mirror these.

use serde::{Deserialize, Serialize};

/// A request of the simulator.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The gossip graph, once, before the first payment.
    Graph(GraphMsg),
    /// Channels whose policies changed since the graph was entered: the
    /// channel_updates failures brought back, which reach LDK by gossip
    /// between payments.
    Gossip(GossipMsg),
    /// A new payment starts.
    Pay(PayMsg),
    /// The next route of the payment.
    Route(RouteMsg),
    /// The outcome of a path the bridge gave.
    Result(ResultMsg),
    /// The payment ended.
    End(EndMsg),
}

/// The gossip view: nodes by index, channels with both directions' policies.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphMsg {
    /// Virtual time, seconds since the Unix epoch.
    pub now_s: u64,
    /// Node ids as 66 hex characters; later messages name nodes by index.
    pub nodes: Vec<String>,
    pub channels: Vec<ChannelMsg>,
}

/// Changed channels, with both directions' current policies.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GossipMsg {
    pub channels: Vec<ChannelMsg>,
}

/// One announced channel.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelMsg {
    pub scid: u64,
    pub node1: usize,
    pub node2: usize,
    pub capacity_sat: u64,
    /// The policy node1 announced (toward node2), then node2's; null when
    /// that node announced none.
    pub policies: [Option<PolicyMsg>; 2],
}

/// One direction's channel_update.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyMsg {
    pub disabled: bool,
    pub cltv_delta: u16,
    pub htlc_min_msat: u64,
    /// Absent when the update carried no htlc_maximum_msat.
    pub htlc_max_msat: Option<u64>,
    pub fee_base_msat: u32,
    pub fee_ppm: u32,
}

/// A payment, as an MPP invoice and the sender's channels describe it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayMsg {
    pub now_s: u64,
    pub height: u32,
    pub source: usize,
    pub target: usize,
    pub amount_msat: u64,
    pub fee_limit_msat: u64,
    pub max_parts: u32,
    /// The absolute block height no HTLC of the payment may exceed.
    pub cltv_limit: u32,
    pub final_cltv: u16,
    /// Whether the receiver's features allow multi-path payments.
    pub mpp: bool,
    /// 64 hex characters: the payment's own entropy (the router's random
    /// seed bytes, hence LDK's shadow cltv offsets).
    pub seed: String,
    pub first_hops: Vec<FirstHopMsg>,
}

/// One of the sender's channels, with its spendable balance.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct FirstHopMsg {
    pub scid: u64,
    pub peer: usize,
    pub capacity_sat: u64,
    pub outbound_msat: u64,
}

/// A request for the next route carrying at most amount_msat.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteMsg {
    pub amount_msat: u64,
    /// True for the first request of a round: nothing of the payment is
    /// in flight that the bridge has not heard the outcome of.
    pub new_round: bool,
}

/// The outcome of one path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultMsg {
    pub id: u64,
    pub now_s: u64,
    /// "settled", "held" (atomic MPP: arrived, kept by the receiver) or
    /// "failed".
    pub outcome: String,
    /// The BOLT 4 failure code; 0 for an unreadable failure.
    pub code: u16,
    /// Whether the failure message carried a channel_update.
    pub has_update: bool,
    /// The node the failure came from: 0 the sender, i+1 the node of hop
    /// i, -1 none on the path (an unreadable failure).
    pub source_idx: i64,
}

/// The end of the payment.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndMsg {
    pub now_s: u64,
    pub success: bool,
}

/// The answer to a request.
#[derive(Serialize, Default)]
pub struct Reply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathMsg>,
    /// Why no path: the payment is over for LDK (no route, or failed for
    /// good). Not a protocol error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_route: Option<String>,
    /// For the graph: how many announcements and updates LDK refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<usize>,
    /// A malformed or out-of-order request: the simulator's bug.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One path of LDK's route, in LDK's own terms (lightning::routing::router::RouteHop).
#[derive(Serialize)]
pub struct PathMsg {
    pub id: u64,
    pub hops: Vec<HopMsg>,
}

/// One hop: the channel into `node`, the fee `node` takes for the next
/// channel (for the last hop, the amount delivered) and the cltv delta it
/// adds (for the last hop, the final delta with LDK's shadow offset).
#[derive(Serialize)]
pub struct HopMsg {
    pub scid: u64,
    pub node: usize,
    pub fee_msat: u64,
    pub cltv_delta: u32,
}
