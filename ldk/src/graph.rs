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
            let bytes = decode_hex(id)
                .filter(|b| b.len() == 33)
                .ok_or_else(|| format!("nodes[{i}]: not 66 hex characters: {id:?}"))?;
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

/// Bytes of a hex string, or None (only the digits 0-9, a-f and A-F).
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QUIET;

    /// The hex id of the key of the secret [i; 32]: a real node id.
    fn real_id(i: u8) -> (String, PublicKey) {
        let secret = SecretKey::from_slice(&[i; 32]).unwrap();
        let key = PublicKey::from_secret_key(&Secp256k1::signing_only(), &secret);
        (hex(&key.serialize()), key)
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The first `n` synthetic ids of the form 02 || be256(i) that are
    /// not on the curve, as a scenario's made-up node ids are.
    fn synthetic_ids(n: usize) -> Vec<String> {
        (1u32..)
            .map(|i| format!("02{i:064x}"))
            .filter(|id| PublicKey::from_slice(&decode_hex(id).unwrap()).is_err())
            .take(n)
            .collect()
    }

    /// Two synthetic ids in ascending order whose derived keys come in
    /// the opposite order: the first is the simulator's node 1 and
    /// LDK's node_two.
    fn swapped_pair() -> (String, String) {
        let ids = synthetic_ids(16);
        let nodes = Nodes::new(&ids).unwrap();
        for i in 0..ids.len() {
            for j in i + 1..ids.len() {
                assert!(ids[i] < ids[j]);
                let (ki, kj) = (
                    NodeId::from_pubkey(&nodes.keys[i]),
                    NodeId::from_pubkey(&nodes.keys[j]),
                );
                if ki > kj {
                    return (ids[i].clone(), ids[j].clone());
                }
            }
        }
        panic!("no pair of the first synthetic ids orders differently once re-keyed");
    }

    #[test]
    fn nodes_keys() {
        let (real, real_key) = real_id(1);
        let synth = synthetic_ids(2);
        let ids = vec![real.clone(), synth[0].clone(), synth[1].clone()];
        let nodes = Nodes::new(&ids).unwrap();
        assert_eq!(nodes.keys.len(), 3);
        // A valid key is kept as it is.
        assert_eq!(nodes.keys[0], real_key);
        assert_eq!(hex(&nodes.keys[0].serialize()), real);
        // An id off the curve gets a valid key of its own, not its bytes.
        for (i, id) in synth.iter().enumerate() {
            let key = nodes.keys[i + 1];
            assert_ne!(hex(&key.serialize()), *id, "{id} kept as it is");
            assert!(PublicKey::from_slice(&key.serialize()).is_ok());
        }
        assert_ne!(nodes.keys[1], nodes.keys[2]);
        assert_ne!(nodes.keys[1], nodes.keys[0]);
        // The same id always gets the same key.
        let again = Nodes::new(&ids).unwrap();
        assert_eq!(again.keys, nodes.keys);
        // Both ways: index_of and key.
        for (i, key) in nodes.keys.iter().enumerate() {
            assert_eq!(nodes.index_of(key), i);
            assert_eq!(nodes.key(i, "f").unwrap(), *key);
        }
        let err = nodes.key(3, "target").unwrap_err();
        assert!(err.contains("target") && err.contains('3'), "{err}");
    }

    #[test]
    fn nodes_refused() {
        let (real, _) = real_id(2);
        let synth = synthetic_ids(1).remove(0);
        let cases: Vec<(&str, Vec<String>, &str)> = vec![
            (
                "real id twice",
                vec![real.clone(), real.clone()],
                "listed twice",
            ),
            (
                "synthetic id twice",
                vec![synth.clone(), real.clone(), synth.clone()],
                "nodes[2]",
            ),
            ("not hex", vec![real.clone(), "zz".repeat(33)], "not 66 hex"),
            ("odd length", vec![format!("{real}0")], "not 66 hex"),
            (
                "non-ascii",
                vec![format!("0é0{}", "00".repeat(31))],
                "not 66 hex",
            ),
            (
                "a sign",
                vec![format!("+2{}", "00".repeat(32))],
                "not 66 hex",
            ),
            ("short", vec!["02ab".to_string()], "not 66 hex"),
        ];
        for (name, ids, want) in cases {
            match Nodes::new(&ids) {
                Ok(_) => panic!("{name}: accepted"),
                Err(e) => assert!(e.contains(want), "{name}: {e:?} does not say {want:?}"),
            }
        }
    }

    fn policy(
        fee_base_msat: u32,
        fee_ppm: u32,
        cltv_delta: u16,
        htlc_max_msat: Option<u64>,
        disabled: bool,
    ) -> PolicyMsg {
        PolicyMsg {
            disabled,
            cltv_delta,
            htlc_min_msat: 1_000,
            htlc_max_msat,
            fee_base_msat,
            fee_ppm,
        }
    }

    fn channel(
        scid: u64,
        node1: usize,
        node2: usize,
        policies: [Option<PolicyMsg>; 2],
    ) -> ChannelMsg {
        ChannelMsg {
            scid,
            node1,
            node2,
            capacity_sat: 1_000_000,
            policies,
        }
    }

    /// Nodes 0 and 1 synthetic, in id order, with node 0's key the larger;
    /// node 2 a real key.
    fn test_nodes() -> (Vec<String>, Nodes) {
        let (a, b) = swapped_pair();
        let ids = vec![a, b, real_id(3).0];
        let nodes = Nodes::new(&ids).unwrap();
        (ids, nodes)
    }

    /// network_graph's answer for `channels` over test_nodes() at time 0,
    /// with the nodes and the stamps to gossip on the graph.
    fn graph_at_zero(
        channels: Vec<ChannelMsg>,
    ) -> (Result<(NetworkGraph<Log>, usize), String>, Nodes, Stamps) {
        let (ids, nodes) = test_nodes();
        let msg = GraphMsg {
            now_s: 0,
            nodes: ids,
            channels,
        };
        let mut stamps = Stamps::new().unwrap();
        let built = network_graph(&msg, &nodes, &mut stamps, &QUIET);
        (built, nodes, stamps)
    }

    /// What the read-only graph holds for one direction.
    type Seen = (u32, u32, u16, u64, u64, bool);

    fn seen(info: &Option<lightning::routing::gossip::ChannelUpdateInfo>) -> Option<Seen> {
        info.as_ref().map(|u| {
            (
                u.fees.base_msat,
                u.fees.proportional_millionths,
                u.cltv_expiry_delta,
                u.htlc_minimum_msat,
                u.htlc_maximum_msat,
                u.enabled,
            )
        })
    }

    #[test]
    fn network_graph_directions() {
        let (ids, nodes) = test_nodes();
        let (k0, k1, k2) = (
            NodeId::from_pubkey(&nodes.keys[0]),
            NodeId::from_pubkey(&nodes.keys[1]),
            NodeId::from_pubkey(&nodes.keys[2]),
        );
        assert!(k0 > k1, "test_nodes: node 0's key must be the larger");
        let msg = GraphMsg {
            now_s: 1_767_225_600,
            nodes: ids,
            channels: vec![
                // Simulator node 1 (node 0) is LDK's node_two.
                channel(
                    1,
                    0,
                    1,
                    [
                        Some(policy(1_000, 10, 40, Some(500_000_000), false)),
                        Some(policy(2_000, 20, 80, None, true)),
                    ],
                ),
                // Only node 1 announced; its htlc_max above the capacity.
                channel(
                    2,
                    1,
                    2,
                    [
                        Some(policy(3_000, 30, 144, Some(5_000_000_000), false)),
                        None,
                    ],
                ),
                // Only the second end announced.
                channel(3, 0, 2, [None, Some(policy(4_000, 40, 18, None, false))]),
                // Refused: a known scid (1 + 2 updates), a channel to
                // itself (1 + 1 update).
                channel(
                    1,
                    1,
                    2,
                    [
                        Some(policy(9, 9, 9, None, false)),
                        Some(policy(9, 9, 9, None, false)),
                    ],
                ),
                channel(4, 2, 2, [Some(policy(9, 9, 9, None, false)), None]),
            ],
        };
        let mut stamps = Stamps::new().unwrap();
        let (graph, refused) = network_graph(&msg, &nodes, &mut stamps, &QUIET).unwrap();
        assert_eq!(refused, 5);
        let ro = graph.read_only();
        assert_eq!(ro.channels().len(), 3);

        let ch1 = ro.channel(1).expect("channel 1");
        assert_eq!((ch1.node_one, ch1.node_two), (k1, k0));
        assert_eq!(ch1.capacity_sats, Some(1_000_000));
        // node_two (simulator node 1) announced the first policy.
        assert_eq!(
            seen(&ch1.two_to_one),
            Some((1_000, 10, 40, 1_000, 500_000_000, true))
        );
        // The second end's: disabled, and no htlc_max means the capacity.
        assert_eq!(
            seen(&ch1.one_to_two),
            Some((2_000, 20, 80, 1_000, 1_000_000_000, false))
        );

        let ch2 = ro.channel(2).expect("channel 2");
        let (one, two) = if k1 < k2 { (k1, k2) } else { (k2, k1) };
        assert_eq!((ch2.node_one, ch2.node_two), (one, two));
        let (from1, from2) = if k1 < k2 {
            (&ch2.one_to_two, &ch2.two_to_one)
        } else {
            (&ch2.two_to_one, &ch2.one_to_two)
        };
        assert_eq!(
            seen(from1),
            Some((3_000, 30, 144, 1_000, 1_000_000_000, true))
        );
        assert_eq!(seen(from2), None);

        let ch3 = ro.channel(3).expect("channel 3");
        let (from0, from2) = if k0 < k2 {
            (&ch3.one_to_two, &ch3.two_to_one)
        } else {
            (&ch3.two_to_one, &ch3.one_to_two)
        };
        assert_eq!(seen(from0), None);
        assert_eq!(
            seen(from2),
            Some((4_000, 40, 18, 1_000, 1_000_000_000, true))
        );
        assert!(ro.channel(4).is_none());
    }

    #[test]
    fn network_graph_bad_node() {
        let (built, _, _) = graph_at_zero(vec![
            channel(1, 0, 1, [None, None]),
            channel(2, 1, 9, [None, None]),
        ]);
        let err = built.err().expect("accepted");
        assert!(
            err.contains("channels[1]") && err.contains("node2"),
            "{err}"
        );
    }

    #[test]
    fn apply_gossip_replaces_policies() {
        let (built, nodes, mut stamps) = graph_at_zero(vec![channel(
            1,
            0,
            1,
            [
                Some(policy(1_000, 10, 40, None, false)),
                Some(policy(2_000, 20, 80, None, true)),
            ],
        )]);
        let (graph, refused) = built.unwrap();
        assert_eq!(refused, 0);
        // Node 0 (LDK's node_two) raises its fee; node 1 enables its side.
        for (round, base) in [(1, 5_000), (2, 7_000)] {
            let update = vec![channel(
                1,
                0,
                1,
                [
                    Some(policy(base, 50, 60, Some(300_000_000), false)),
                    Some(policy(2_000, 20, 80, None, false)),
                ],
            )];
            let refused = apply_gossip(&graph, &update, &nodes, &mut stamps).unwrap();
            assert_eq!(refused, 0, "round {round}");
            let ro = graph.read_only();
            let ch = ro.channel(1).unwrap();
            assert_eq!(
                seen(&ch.two_to_one),
                Some((base, 50, 60, 1_000, 300_000_000, true)),
                "round {round}"
            );
            assert_eq!(
                seen(&ch.one_to_two),
                Some((2_000, 20, 80, 1_000, 1_000_000_000, true)),
                "round {round}"
            );
        }
        // Gossip for a channel the graph does not have is refused, update
        // by update; one naming no node is an error.
        let unknown = vec![channel(
            77,
            0,
            2,
            [
                Some(policy(1, 1, 1, None, false)),
                Some(policy(1, 1, 1, None, false)),
            ],
        )];
        assert_eq!(
            apply_gossip(&graph, &unknown, &nodes, &mut stamps).unwrap(),
            2
        );
        let bad = vec![channel(1, 5, 1, [None, None])];
        let err = apply_gossip(&graph, &bad, &nodes, &mut stamps).unwrap_err();
        assert!(
            err.contains("channels[0]") && err.contains("node1"),
            "{err}"
        );
    }

    #[test]
    fn decode_hex_cases() {
        let cases: Vec<(&str, Option<Vec<u8>>)> = vec![
            ("", Some(vec![])),
            ("00ff", Some(vec![0, 255])),
            ("AbCd", Some(vec![0xab, 0xcd])),
            ("abc", None),
            ("zz", None),
            ("0g", None),
            ("0é0", None),
            ("é1", None),
        ];
        for (input, want) in cases {
            assert_eq!(decode_hex(input), want, "{input:?}");
        }
    }
}
