//! The simulator's gossip view entered into LDK's own NetworkGraph, as
//! unsigned announcements and updates (the simulator signs nothing).

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use lightning::bitcoin::constants::ChainHash;
use lightning::bitcoin::hashes::{sha256, Hash, HashEngine};
use lightning::bitcoin::secp256k1::{PublicKey, Secp256k1, SecretKey};
use lightning::bitcoin::Network;
use lightning::ln::msgs::UnsignedChannelUpdate;
use lightning::routing::gossip::{NetworkGraph, NodeId};
use lightning::types::features::ChannelFeatures;

use crate::protocol::{ChannelMsg, GraphMsg, PolicyMsg};
use crate::Log;

/// The simulator's nodes as LDK keys, both ways.
pub struct Nodes {
    pub keys: Vec<PublicKey>,
    index: HashMap<NodeId, usize>,
}

impl Nodes {
    /// Keys for the simulator's node ids. An id that is a valid public key
    /// is used as it is (real graphs); a synthetic id that is not on the
    /// curve gets a key derived from it, so that LDK can route to it.
    pub fn new(ids: &[String]) -> Result<Nodes, String> {
        let secp = Secp256k1::signing_only();
        let mut keys = Vec::with_capacity(ids.len());
        let mut index = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let bytes = decode_hex(id).ok_or_else(|| format!("nodes[{i}]: not hex: {id:?}"))?;
            let key = PublicKey::from_slice(&bytes).unwrap_or_else(|_| derived_key(&secp, &bytes));
            if index.insert(NodeId::from_pubkey(&key), i).is_some() {
                return Err(format!("nodes[{i}]: {id} is listed twice"));
            }
            keys.push(key);
        }
        Ok(Nodes { keys, index })
    }

    /// The key of node i, or an error naming the field.
    pub fn key(&self, i: usize, field: &str) -> Result<PublicKey, String> {
        self.keys
            .get(i)
            .copied()
            .ok_or_else(|| format!("{field}: no node {i}"))
    }

    /// The simulator's index of an LDK node.
    pub fn index_of(&self, key: &PublicKey) -> usize {
        self.index[&NodeId::from_pubkey(key)]
    }
}

/// A valid key standing for an id that is not one: the public key of the
/// secret sha256("routesim-ldk" || id || counter), for the first counter
/// that gives a valid secret.
fn derived_key(secp: &Secp256k1<lightning::bitcoin::secp256k1::SignOnly>, id: &[u8]) -> PublicKey {
    for counter in 0u32.. {
        let mut engine = sha256::Hash::engine();
        engine.input(b"routesim-ldk");
        engine.input(id);
        engine.input(&counter.to_be_bytes());
        let digest = sha256::Hash::from_engine(engine).to_byte_array();
        if let Ok(secret) = SecretKey::from_slice(&digest) {
            return PublicKey::from_secret_key(secp, &secret);
        }
    }
    unreachable!("a sha256 digest is a valid secret key with overwhelming probability")
}

/// Timestamps for the unsigned gossip: LDK built with std refuses updates
/// stamped more than two weeks before the wall clock, and a channel's
/// update must be newer than the last. Stamps play no part in routing.
pub struct Stamps(u32);

impl Stamps {
    pub fn new() -> Result<Stamps, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?;
        Ok(Stamps(now.as_secs() as u32))
    }

    fn next(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

/// The view's channels entered into a fresh NetworkGraph, and how many
/// announcements and updates LDK refused (as it would refuse them from a
/// peer: they stay out of its graph).
pub fn network_graph(
    msg: &GraphMsg,
    nodes: &Nodes,
    stamps: &mut Stamps,
    logger: Log,
) -> Result<(NetworkGraph<Log>, usize), String> {
    let graph = NetworkGraph::new(Network::Bitcoin, logger);
    let mut refused = 0;
    let stamp = stamps.next();
    for (i, ch) in msg.channels.iter().enumerate() {
        let (one, two, swapped) = ends(ch, nodes).map_err(|e| format!("channels[{i}]: {e}"))?;
        let added = graph.add_channel_from_partial_announcement(
            ch.scid,
            Some(ch.capacity_sat),
            stamp as u64,
            ChannelFeatures::empty(),
            one,
            two,
        );
        refused += match added {
            Ok(()) => update_channel(&graph, ch, swapped, stamp),
            Err(_) => 1 + ch.policies.iter().flatten().count(),
        };
    }
    Ok((graph, refused))
}

/// Enters the current policies of changed channels as newer updates;
/// returns how many LDK refused.
pub fn apply_gossip(
    graph: &NetworkGraph<Log>,
    channels: &[ChannelMsg],
    nodes: &Nodes,
    stamps: &mut Stamps,
) -> Result<usize, String> {
    let stamp = stamps.next();
    let mut refused = 0;
    for (i, ch) in channels.iter().enumerate() {
        let (_, _, swapped) = ends(ch, nodes).map_err(|e| format!("channels[{i}]: {e}"))?;
        refused += update_channel(graph, ch, swapped, stamp);
    }
    Ok(refused)
}

/// A channel's ends as LDK orders them (BOLT 7: node_1 is the smaller
/// key), and whether that swaps the simulator's order: keys derived for
/// synthetic ids may order differently from the ids.
fn ends(ch: &ChannelMsg, nodes: &Nodes) -> Result<(NodeId, NodeId, bool), String> {
    let a = NodeId::from_pubkey(&nodes.key(ch.node1, "node1")?);
    let b = NodeId::from_pubkey(&nodes.key(ch.node2, "node2")?);
    Ok(if a < b { (a, b, false) } else { (b, a, true) })
}

/// Enters both directions' updates (direction 0 is node_1's); returns how
/// many LDK refused.
fn update_channel(graph: &NetworkGraph<Log>, ch: &ChannelMsg, swapped: bool, stamp: u32) -> usize {
    let mut refused = 0;
    for (side, policy) in ch.policies.iter().enumerate() {
        if let Some(p) = policy {
            let direction = (side == 1) != swapped;
            refused += usize::from(
                graph
                    .update_channel_unsigned(&channel_update(ch, p, direction, stamp))
                    .is_err(),
            );
        }
    }
    refused
}

/// The unsigned channel_update of one direction. An update without
/// htlc_maximum_msat (optional before 2022, mandatory since) is entered
/// with the channel's capacity, which LDK assumes anyway.
fn channel_update(
    ch: &ChannelMsg,
    p: &PolicyMsg,
    direction: bool,
    stamp: u32,
) -> UnsignedChannelUpdate {
    let capacity_msat = ch.capacity_sat.saturating_mul(1000);
    UnsignedChannelUpdate {
        chain_hash: ChainHash::using_genesis_block(Network::Bitcoin),
        short_channel_id: ch.scid,
        timestamp: stamp,
        message_flags: 1,
        channel_flags: u8::from(direction) | (u8::from(p.disabled) << 1),
        cltv_expiry_delta: p.cltv_delta,
        htlc_minimum_msat: p.htlc_min_msat,
        htlc_maximum_msat: p.htlc_max_msat.unwrap_or(capacity_msat).min(capacity_msat),
        fee_base_msat: p.fee_base_msat,
        fee_proportional_millionths: p.fee_ppm,
        excess_data: Vec::new(),
    }
}

/// Bytes of a hex string, or None.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}
