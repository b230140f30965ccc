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
