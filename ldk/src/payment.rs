//! One payment as LDK's outbound payments make it: the whole amount routed
//! by one `find_route`, every path sent at once, and each retry routing
//! what failed, with the scid blamed avoided, the fee budget left and the
//! HTLCs in flight accounted (ln/outbound_payment.rs, lightning 0.2.7).
//! The simulator's payment loop dispatches the paths and reports their
//! outcomes; the scenario's attempt cap takes the place of LDK's `Retry`.

use std::collections::{BTreeMap, VecDeque};

use lightning::bitcoin::secp256k1::PublicKey;
use lightning::ln::channel_state::{ChannelCounterparty, ChannelDetails};
use lightning::ln::channelmanager::provided_init_features;
use lightning::ln::types::ChannelId;
use lightning::routing::router::{InFlightHtlcs, Path, PaymentParameters, RouteParameters};
use lightning::types::features::Bolt11InvoiceFeatures;
use lightning::util::config::UserConfig;

use crate::protocol::{FirstHopMsg, PayMsg};

/// A path LDK chose, sent or waiting in the round's queue.
struct SentPath {
    path: Path,
    /// Held by the receiver of an atomic payment until the whole set.
    held: bool,
}

/// The state LDK's PendingOutboundPayment::Retryable keeps.
pub struct Payment {
    pub payer: PublicKey,
    params: PaymentParameters,
    total_msat: u64,
    /// Delivered, held or in flight (LDK's pending_amt_msat).
    pending_msat: u64,
    /// LDK's remaining_max_total_routing_fee_msat.
    fee_left_msat: u64,
    first_hops: Vec<FirstHop>,
    paths: BTreeMap<u64, SentPath>,
    /// Paths of this round's route not yet handed to the simulator.
    queue: VecDeque<u64>,
    next_id: u64,
    /// Why the payment is over for LDK, once it is.
    pub over: Option<String>,
}

struct FirstHop {
    msg: FirstHopMsg,
    peer: PublicKey,
    /// Amount of the payment's live paths over this channel.
    spent_msat: u64,
}

impl Payment {
    /// A payment from `payer` to `target` as an MPP invoice describes it.
    pub fn new(
        msg: &PayMsg,
        payer: PublicKey,
        target: PublicKey,
        peers: Vec<PublicKey>,
    ) -> Result<Payment, String> {
        // LDK builds HTLC time locks on the next block (best height + 1).
        let max_delta = msg.cltv_limit.checked_sub(msg.height + 1).ok_or_else(|| {
            format!(
                "cltv_limit {} is not above height {} + 1",
                msg.cltv_limit, msg.height
            )
        })?;
        let params = PaymentParameters::from_node_id(target, u32::from(msg.final_cltv))
            .with_bolt11_features(invoice_features(msg.mpp))
            .map_err(|()| "bolt11 features refused".to_string())?
            .with_max_path_count(msg.max_parts.clamp(1, u32::from(u8::MAX)) as u8)
            .with_max_total_cltv_expiry_delta(max_delta);
        let first_hops = msg.first_hops.iter().zip(peers).map(|(m, peer)| FirstHop {
            msg: m.clone(),
            peer,
            spent_msat: 0,
        });
        Ok(Payment {
            payer,
            params,
            total_msat: msg.amount_msat,
            pending_msat: 0,
            fee_left_msat: msg.fee_limit_msat,
            first_hops: first_hops.collect(),
            paths: BTreeMap::new(),
            queue: VecDeque::new(),
            next_id: 0,
            over: None,
        })
    }

    /// The route parameters of a (re)try: what is not pending yet
    /// (check_retry_payments), never above what the simulator asks for.
    pub fn route_params(&self, asked_msat: u64) -> RouteParameters {
        RouteParameters {
            payment_params: self.params.clone(),
            final_value_msat: asked_msat.min(self.total_msat.saturating_sub(self.pending_msat)),
            max_total_routing_fee_msat: Some(self.fee_left_msat),
        }
    }

    /// The sender's channels as ChannelManager::list_usable_channels shows
    /// them: each one's balance less what the payment's live paths hold.
    pub fn first_hops(&self) -> Vec<ChannelDetails> {
        self.first_hops.iter().map(channel_details).collect()
    }

    /// The HTLCs in flight: every path sent and not yet failed or settled.
    pub fn in_flight(&self) -> InFlightHtlcs {
        let mut htlcs = InFlightHtlcs::new();
        for sent in self.paths.values() {
            htlcs.process_path(&sent.path, self.payer);
        }
        htlcs
    }

    /// Queues a route's paths, as LDK sends them all: each one's value is
    /// pending, its fee spent, its amount taken from its first hop.
    pub fn queue_route(&mut self, paths: Vec<Path>) {
        for path in paths {
            self.book(&path, true);
            let id = self.next_id;
            self.next_id += 1;
            self.paths.insert(id, SentPath { path, held: false });
            self.queue.push_back(id);
        }
    }

    /// The next queued path, with its id.
    pub fn next_path(&mut self) -> Option<(u64, &Path)> {
        let id = self.queue.pop_front()?;
        Some((id, &self.paths[&id].path))
    }

    /// Forgets the queued paths the simulator did not take (its shard or
    /// attempt cap came first): they were never sent.
    pub fn drop_unsent(&mut self) {
        while let Some(id) = self.queue.pop_front() {
            if let Some(sent) = self.paths.remove(&id) {
                self.book(&sent.path, false);
            }
        }
    }

    /// Books a path's amounts in (sending) or out (it failed or was never
    /// sent).
    fn book(&mut self, path: &Path, sending: bool) {
        let value = path.final_value_msat();
        let fee = path.fee_msat();
        let total = value + fee;
        let scid = path.hops[0].short_channel_id;
        let hop = self.first_hops.iter_mut().find(|h| h.msg.scid == scid);
        if sending {
            self.pending_msat += value;
            self.fee_left_msat = self.fee_left_msat.saturating_sub(fee);
            if let Some(h) = hop {
                h.spent_msat += total;
            }
        } else {
            self.pending_msat = self.pending_msat.saturating_sub(value);
            self.fee_left_msat = self.fee_left_msat.saturating_add(fee);
            if let Some(h) = hop {
                h.spent_msat = h.spent_msat.saturating_sub(total);
            }
        }
    }

    /// A path the simulator reported: its Path, or an error for an id
    /// that is not live.
    pub fn path(&self, id: u64) -> Result<&Path, String> {
        match self.paths.get(&id) {
            Some(sent) if !self.queue.contains(&id) => Ok(&sent.path),
            _ => Err(format!("result: path {id} is not in flight")),
        }
    }

    /// The path settled: it leaves the HTLCs in flight, its value stays
    /// delivered and its amount stays spent from the first hop.
    pub fn settled(&mut self, id: u64) {
        self.paths.remove(&id);
    }

    /// The path arrived at the receiver of an atomic payment, which holds
    /// it: it stays in flight until the payment ends.
    pub fn held(&mut self, id: u64) {
        if let Some(sent) = self.paths.get_mut(&id) {
            sent.held = true;
        }
    }

    /// The path failed: what it carried is free again, and a blamed
    /// channel is avoided by the payment's retries
    /// (insert_previously_failed_scid).
    pub fn failed(&mut self, id: u64, blamed: Option<u64>) {
        if let Some(sent) = self.paths.remove(&id) {
            self.book(&sent.path, false);
        }
        if let Some(scid) = blamed {
            self.params.previously_failed_channels.push(scid);
        }
    }

    /// The held paths, for the end of an atomic payment.
    pub fn held_paths(&self) -> Vec<Path> {
        self.paths
            .values()
            .filter(|s| s.held)
            .map(|s| s.path.clone())
            .collect()
    }
}

/// The features of an MPP invoice (lightning-invoice's defaults for a
/// payment with a secret), with basic_mpp when the receiver allows MPP.
fn invoice_features(mpp: bool) -> Bolt11InvoiceFeatures {
    let mut f = Bolt11InvoiceFeatures::empty();
    f.set_variable_length_onion_required();
    f.set_payment_secret_required();
    if mpp {
        f.set_basic_mpp_optional();
    }
    f
}

/// A usable, announced, outbound channel of the sender with `spendable`
/// msat it can send in one HTLC.
fn channel_details(hop: &FirstHop) -> ChannelDetails {
    let spendable = hop.msg.outbound_msat.saturating_sub(hop.spent_msat);
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&hop.msg.scid.to_be_bytes());
    ChannelDetails {
        channel_id: ChannelId(id),
        counterparty: ChannelCounterparty {
            node_id: hop.peer,
            features: provided_init_features(&UserConfig::default()),
            unspendable_punishment_reserve: 0,
            forwarding_info: None,
            outbound_htlc_minimum_msat: None,
            outbound_htlc_maximum_msat: None,
        },
        funding_txo: None,
        channel_type: None,
        short_channel_id: Some(hop.msg.scid),
        outbound_scid_alias: None,
        inbound_scid_alias: None,
        channel_value_satoshis: hop.msg.capacity_sat,
        unspendable_punishment_reserve: None,
        user_channel_id: 0,
        feerate_sat_per_1000_weight: None,
        outbound_capacity_msat: spendable,
        next_outbound_htlc_limit_msat: spendable,
        next_outbound_htlc_minimum_msat: 0,
        inbound_capacity_msat: 0,
        confirmations_required: None,
        confirmations: None,
        force_close_spend_delay: None,
        is_outbound: true,
        is_channel_ready: true,
        channel_shutdown_state: None,
        is_usable: true,
        is_announced: true,
        inbound_htlc_minimum_msat: None,
        inbound_htlc_maximum_msat: None,
        config: None,
        pending_inbound_htlcs: Vec::new(),
        pending_outbound_htlcs: Vec::new(),
        funding_redeem_script: None,
    }
}
