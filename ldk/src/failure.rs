//! What LDK learns from a failed path. The simulator hands over the failure
//! already decoded (code, erring node, whether it carried a channel_update)
//! instead of an encrypted onion, so this module takes the place of LDK's
//! `onion_utils::process_onion_failure` (crate-private) on that decoded
//! form: the same branches, in the same order, for lightning 0.2.7.

use lightning::bitcoin::secp256k1::PublicKey;
use lightning::routing::gossip::NetworkUpdate;
use lightning::routing::router::Path;

const BADONION: u16 = 0x8000;
const PERM: u16 = 0x4000;
const NODE: u16 = 0x2000;
const UPDATE: u16 = 0x1000;

/// BOLT 4 codes only the final node sends (LDK's is_recipient_failure).
const INCORRECT_PAYMENT_DETAILS: u16 = PERM | 15;
const FINAL_INCORRECT_CLTV_EXPIRY: u16 = 18;
const FINAL_INCORRECT_HTLC_AMOUNT: u16 = 19;
const MPP_TIMEOUT: u16 = 23;

/// What a failed path teaches, as LDK's DecodedOnionFailure carries it.
#[derive(Debug, PartialEq)]
pub struct Learnings {
    /// Applied to the network graph (a permanent failure removes a channel
    /// or a node; a temporary one changes nothing).
    pub network_update: Option<NetworkUpdate>,
    /// The channel blamed: the scorer's failed channel, and one the
    /// payment's retries avoid.
    pub short_channel_id: Option<u64>,
    /// The payment is over (the recipient refused it, or the failure could
    /// not be attributed to any node).
    pub payment_failed_permanently: bool,
}

/// The learnings of a failure with `code` from the node at `source_idx`
/// (0 the sender, i+1 the node of hop i, -1 no node of the path).
pub fn learnings(path: &Path, code: u16, has_update: bool, source_idx: i64) -> Learnings {
    let hops = &path.hops;
    if source_idx == 0 {
        // The first hop could not take the HTLC: LDK fails it locally and
        // retries without that channel (push_path_failed_evs_and_scids).
        return Learnings {
            network_update: None,
            short_channel_id: Some(hops[0].short_channel_id),
            payment_failed_permanently: false,
        };
    }
    let erring = match usize::try_from(source_idx) {
        Ok(i) if i >= 1 && i <= hops.len() => i - 1,
        // No hop's HMAC matched: LDK ends its walk on the final hop and
        // takes the failure as the recipient's.
        _ => {
            return Learnings {
                network_update: None,
                short_channel_id: None,
                payment_failed_permanently: true,
            };
        }
    };
    let route_hop = &hops[erring];
    let is_final = erring + 1 == hops.len();
    let failing_scid = if is_final {
        route_hop.short_channel_id
    } else {
        hops[erring + 1].short_channel_id
    };
    let node_failure = |node_id: PublicKey, is_permanent: bool| {
        Some(NetworkUpdate::NodeFailure {
            node_id,
            is_permanent,
        })
    };
    let channel_failure = |is_permanent: bool| {
        Some(NetworkUpdate::ChannelFailure {
            short_channel_id: failing_scid,
            is_permanent,
        })
    };

    if code == 0 {
        // A readable packet without an error code.
        return Learnings {
            network_update: node_failure(route_hop.pubkey, true),
            short_channel_id: Some(route_hop.short_channel_id),
            payment_failed_permanently: is_final,
        };
    }
    let recipient_failure = matches!(
        code,
        INCORRECT_PAYMENT_DETAILS
            | FINAL_INCORRECT_CLTV_EXPIRY
            | FINAL_INCORRECT_HTLC_AMOUNT
            | MPP_TIMEOUT
    );
    let payment_failed = recipient_failure && is_final;
    let (network_update, short_channel_id) = if code & BADONION != 0 {
        (channel_failure(true), None)
    } else if code & NODE != 0 {
        (
            node_failure(route_hop.pubkey, code & PERM != 0),
            Some(route_hop.short_channel_id),
        )
    } else if code & PERM != 0 {
        if payment_failed {
            (None, None)
        } else {
            (channel_failure(true), Some(failing_scid))
        }
    } else if code & UPDATE != 0 {
        if has_update {
            (channel_failure(false), Some(failing_scid))
        } else {
            // An update flag without an update: "obviously bogus".
            (
                node_failure(route_hop.pubkey, true),
                Some(route_hop.short_channel_id),
            )
        }
    } else if payment_failed {
        let blamed = matches!(
            code,
            FINAL_INCORRECT_CLTV_EXPIRY | FINAL_INCORRECT_HTLC_AMOUNT
        );
        (None, blamed.then_some(route_hop.short_channel_id))
    } else {
        (
            node_failure(route_hop.pubkey, true),
            Some(route_hop.short_channel_id),
        )
    };
    Learnings {
        network_update,
        short_channel_id,
        payment_failed_permanently: code & PERM != 0 && is_final,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightning::bitcoin::secp256k1::{Secp256k1, SecretKey};
    use lightning::routing::router::RouteHop;
    use lightning::types::features::{ChannelFeatures, NodeFeatures};

    /// The key of the secret [i; 32].
    fn key(i: u8) -> PublicKey {
        let secret = SecretKey::from_slice(&[i; 32]).unwrap();
        PublicKey::from_secret_key(&Secp256k1::signing_only(), &secret)
    }

    fn hop(node: u8, scid: u64) -> RouteHop {
        RouteHop {
            pubkey: key(node),
            node_features: NodeFeatures::empty(),
            short_channel_id: scid,
            channel_features: ChannelFeatures::empty(),
            fee_msat: 1_000,
            cltv_expiry_delta: 40,
            maybe_announced_channel: true,
        }
    }

    /// sender -11-> key(1) -12-> key(2) -13-> key(3), the recipient.
    fn path3() -> Path {
        Path {
            hops: vec![hop(1, 11), hop(2, 12), hop(3, 13)],
            blinded_tail: None,
        }
    }

    fn chan(scid: u64, is_permanent: bool) -> Option<NetworkUpdate> {
        Some(NetworkUpdate::ChannelFailure {
            short_channel_id: scid,
            is_permanent,
        })
    }

    fn node(i: u8, is_permanent: bool) -> Option<NetworkUpdate> {
        Some(NetworkUpdate::NodeFailure {
            node_id: key(i),
            is_permanent,
        })
    }

    fn want(update: Option<NetworkUpdate>, scid: Option<u64>, permanently: bool) -> Learnings {
        Learnings {
            network_update: update,
            short_channel_id: scid,
            payment_failed_permanently: permanently,
        }
    }

    const TEMPORARY_CHANNEL_FAILURE: u16 = UPDATE | 7;
    const FEE_INSUFFICIENT: u16 = UPDATE | 12;
    const INCORRECT_CLTV_EXPIRY: u16 = UPDATE | 13;
    const CHANNEL_DISABLED: u16 = UPDATE | 20;
    const INVALID_ONION_HMAC: u16 = BADONION | PERM | 5;
    const TEMPORARY_NODE_FAILURE: u16 = NODE | 2;
    const PERMANENT_NODE_FAILURE: u16 = PERM | NODE | 2;
    const REQUIRED_NODE_FEATURE_MISSING: u16 = PERM | NODE | 3;
    const PERMANENT_CHANNEL_FAILURE: u16 = PERM | 8;
    const UNKNOWN_NEXT_PEER: u16 = PERM | 10;

    /// Every branch of process_onion_failure (lightning 0.2.7,
    /// ln/onion_utils.rs) on the three-hop path: (name, code, has_update,
    /// source_idx, learnings).
    #[test]
    fn learnings_table() {
        #[rustfmt::skip]
        let cases: Vec<(&str, u16, bool, i64, Learnings)> = vec![
            // The sender's own channel: local failure, retried without it.
            ("local temporary_channel_failure", TEMPORARY_CHANNEL_FAILURE, false, 0,
                want(None, Some(11), false)),
            ("local with update", TEMPORARY_CHANNEL_FAILURE, true, 0,
                want(None, Some(11), false)),
            // No hop's HMAC matched.
            ("unreadable, no source", 0, false, -1, want(None, None, true)),
            ("unreadable, far negative source", 0, false, -7, want(None, None, true)),
            ("source past the recipient", TEMPORARY_CHANNEL_FAILURE, true, 4,
                want(None, None, true)),
            ("source far past the recipient", PERM | 15, false, 1_000, want(None, None, true)),
            // A readable packet without a code.
            ("code 0 from the first hop", 0, false, 1, want(node(1, true), Some(11), false)),
            ("code 0 from a middle hop", 0, false, 2, want(node(2, true), Some(12), false)),
            ("code 0 from the recipient", 0, false, 3, want(node(3, true), Some(13), true)),
            // BADONION: the channel after the erring node, no scid blamed.
            ("badonion from the first hop", INVALID_ONION_HMAC, false, 1,
                want(chan(12, true), None, false)),
            ("badonion from a middle hop", INVALID_ONION_HMAC, false, 2,
                want(chan(13, true), None, false)),
            ("badonion from the recipient", INVALID_ONION_HMAC, false, 3,
                want(chan(13, true), None, true)),
            // NODE: the erring node and the channel into it.
            ("temporary_node_failure", TEMPORARY_NODE_FAILURE, false, 2,
                want(node(2, false), Some(12), false)),
            ("temporary_node_failure with update", TEMPORARY_NODE_FAILURE | UPDATE, true, 1,
                want(node(1, false), Some(11), false)),
            ("permanent_node_failure", PERMANENT_NODE_FAILURE, false, 2,
                want(node(2, true), Some(12), false)),
            ("required_node_feature_missing from the recipient", REQUIRED_NODE_FEATURE_MISSING,
                false, 3, want(node(3, true), Some(13), true)),
            ("temporary_node_failure from the recipient", TEMPORARY_NODE_FAILURE, false, 3,
                want(node(3, false), Some(13), false)),
            // PERM: the channel after the erring node, for good.
            ("permanent_channel_failure from the first hop", PERMANENT_CHANNEL_FAILURE, false, 1,
                want(chan(12, true), Some(12), false)),
            ("unknown_next_peer from a middle hop", UNKNOWN_NEXT_PEER, false, 2,
                want(chan(13, true), Some(13), false)),
            ("permanent_channel_failure from the recipient", PERMANENT_CHANNEL_FAILURE, false, 3,
                want(chan(13, true), Some(13), true)),
            ("incorrect_or_unknown_payment_details from a middle hop", INCORRECT_PAYMENT_DETAILS,
                false, 2, want(chan(13, true), Some(13), false)),
            ("incorrect_or_unknown_payment_details from the recipient", INCORRECT_PAYMENT_DETAILS,
                false, 3, want(None, None, true)),
            ("PERM|UPDATE takes the PERM branch", PERM | UPDATE | 7, true, 1,
                want(chan(12, true), Some(12), false)),
            // UPDATE: the channel after the erring node, for now.
            ("temporary_channel_failure from the first hop", TEMPORARY_CHANNEL_FAILURE, true, 1,
                want(chan(12, false), Some(12), false)),
            ("temporary_channel_failure from a middle hop", TEMPORARY_CHANNEL_FAILURE, true, 2,
                want(chan(13, false), Some(13), false)),
            ("temporary_channel_failure from the recipient", TEMPORARY_CHANNEL_FAILURE, true, 3,
                want(chan(13, false), Some(13), false)),
            ("fee_insufficient", FEE_INSUFFICIENT, true, 1, want(chan(12, false), Some(12), false)),
            ("incorrect_cltv_expiry", INCORRECT_CLTV_EXPIRY, true, 2,
                want(chan(13, false), Some(13), false)),
            ("channel_disabled", CHANNEL_DISABLED, true, 1, want(chan(12, false), Some(12), false)),
            // UPDATE without an update: the erring node is bogus.
            ("temporary_channel_failure without update", TEMPORARY_CHANNEL_FAILURE, false, 2,
                want(node(2, true), Some(12), false)),
            ("fee_insufficient without update, from the first hop", FEE_INSUFFICIENT, false, 1,
                want(node(1, true), Some(11), false)),
            ("temporary_channel_failure without update from the recipient",
                TEMPORARY_CHANNEL_FAILURE, false, 3, want(node(3, true), Some(13), false)),
            // The recipient's own failures.
            ("final_incorrect_cltv_expiry", FINAL_INCORRECT_CLTV_EXPIRY, false, 3,
                want(None, Some(13), false)),
            ("final_incorrect_htlc_amount", FINAL_INCORRECT_HTLC_AMOUNT, false, 3,
                want(None, Some(13), false)),
            ("mpp_timeout", MPP_TIMEOUT, false, 3, want(None, None, false)),
            // A recipient's code from a forwarding node: not understood.
            ("final_incorrect_cltv_expiry from a middle hop", FINAL_INCORRECT_CLTV_EXPIRY, false, 2,
                want(node(2, true), Some(12), false)),
            ("mpp_timeout from the first hop", MPP_TIMEOUT, false, 1,
                want(node(1, true), Some(11), false)),
            // A code with no flag LDK knows.
            ("unknown code from a middle hop", 0x63, false, 2, want(node(2, true), Some(12), false)),
            ("unknown code from the recipient", 0x63, false, 3, want(node(3, true), Some(13), false)),
        ];
        let path = path3();
        for (name, code, has_update, source_idx, expected) in cases {
            assert_eq!(
                learnings(&path, code, has_update, source_idx),
                expected,
                "{name}: code {code:#06x}, update {has_update}, source {source_idx}"
            );
        }
    }

    /// On a one-hop path the erring node is the recipient, and the
    /// channel blamed is the only one.
    #[test]
    fn learnings_one_hop() {
        let path = Path {
            hops: vec![hop(1, 21)],
            blinded_tail: None,
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, u16, bool, i64, Learnings)> = vec![
            ("local", TEMPORARY_CHANNEL_FAILURE, false, 0, want(None, Some(21), false)),
            ("unreadable", 0, false, -1, want(None, None, true)),
            ("out of range", TEMPORARY_CHANNEL_FAILURE, true, 2, want(None, None, true)),
            ("temporary_channel_failure", TEMPORARY_CHANNEL_FAILURE, true, 1,
                want(chan(21, false), Some(21), false)),
            ("incorrect_or_unknown_payment_details", INCORRECT_PAYMENT_DETAILS, false, 1,
                want(None, None, true)),
            ("badonion", INVALID_ONION_HMAC, false, 1, want(chan(21, true), None, true)),
            ("final_incorrect_htlc_amount", FINAL_INCORRECT_HTLC_AMOUNT, false, 1,
                want(None, Some(21), false)),
            ("mpp_timeout", MPP_TIMEOUT, false, 1, want(None, None, false)),
        ];
        for (name, code, has_update, source_idx, expected) in cases {
            assert_eq!(
                learnings(&path, code, has_update, source_idx),
                expected,
                "{name}"
            );
        }
    }
}
