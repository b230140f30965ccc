package realnet

import (
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// failureMessage is the lnwire failure a real lnd's lnrpc.Failure stands
// for, as lnd's router handed it to its own payment lifecycle: the code
// and the fields lnrpc carries (the amount, the expiry, the flags, the
// height and the channel update).
func failureMessage(f *Failure) (lnwire.FailureMessage, error) {
	upd, err := f.Update.wire()
	if err != nil {
		return nil, err
	}
	amt := lnwire.MilliSatoshi(f.HtlcMsat)
	needsUpdate := func(make func(lnwire.ChannelUpdate1) lnwire.FailureMessage) (lnwire.FailureMessage, error) {
		if upd == nil {
			return nil, fmt.Errorf("%w: %s without a channel update", ErrProtocol, f.Code)
		}
		return make(*upd), nil
	}
	switch f.Code {
	case "UNREADABLE_FAILURE":
		return routing.UnreadableFailure{}, nil
	case "TEMPORARY_CHANNEL_FAILURE":
		return lnwire.NewTemporaryChannelFailure(upd), nil
	case "UNKNOWN_NEXT_PEER":
		return &lnwire.FailUnknownNextPeer{}, nil
	case "TEMPORARY_NODE_FAILURE":
		return &lnwire.FailTemporaryNodeFailure{}, nil
	case "PERMANENT_NODE_FAILURE":
		return &lnwire.FailPermanentNodeFailure{}, nil
	case "PERMANENT_CHANNEL_FAILURE":
		return &lnwire.FailPermanentChannelFailure{}, nil
	case "REQUIRED_NODE_FEATURE_MISSING":
		return &lnwire.FailRequiredNodeFeatureMissing{}, nil
	case "REQUIRED_CHANNEL_FEATURE_MISSING":
		return &lnwire.FailRequiredChannelFeatureMissing{}, nil
	case "EXPIRY_TOO_FAR":
		return &lnwire.FailExpiryTooFar{}, nil
	case "MPP_TIMEOUT":
		return &lnwire.FailMPPTimeout{}, nil
	case "INCORRECT_OR_UNKNOWN_PAYMENT_DETAILS":
		return lnwire.NewFailIncorrectDetails(amt, f.Height), nil
	case "FINAL_INCORRECT_CLTV_EXPIRY":
		return lnwire.NewFinalIncorrectCltvExpiry(f.CltvExpiry), nil
	case "FINAL_INCORRECT_HTLC_AMOUNT":
		return lnwire.NewFinalIncorrectHtlcAmount(amt), nil
	case "FEE_INSUFFICIENT":
		return needsUpdate(func(u lnwire.ChannelUpdate1) lnwire.FailureMessage {
			return lnwire.NewFeeInsufficient(amt, u)
		})
	case "AMOUNT_BELOW_MINIMUM":
		return needsUpdate(func(u lnwire.ChannelUpdate1) lnwire.FailureMessage {
			return lnwire.NewAmountBelowMinimum(amt, u)
		})
	case "INCORRECT_CLTV_EXPIRY":
		return needsUpdate(func(u lnwire.ChannelUpdate1) lnwire.FailureMessage {
			return lnwire.NewIncorrectCltvExpiry(f.CltvExpiry, u)
		})
	case "EXPIRY_TOO_SOON":
		return needsUpdate(func(u lnwire.ChannelUpdate1) lnwire.FailureMessage {
			return lnwire.NewExpiryTooSoon(u)
		})
	case "CHANNEL_DISABLED":
		return needsUpdate(func(u lnwire.ChannelUpdate1) lnwire.FailureMessage {
			return lnwire.NewChannelDisabled(uint16(f.Flags), u)
		})
	}
	// The codes left (invalid onion, invalid realm, internal and unknown
	// failures) say nothing a router can act on beyond "this hop failed".
	return &lnwire.FailTemporaryNodeFailure{}, nil
}

// wire is the lnwire form of a failure's channel update; nil for none.
func (u *ChannelUpdate) wire() (*lnwire.ChannelUpdate1, error) {
	if u == nil {
		return nil, nil
	}
	id, err := scenario.ParseSCID(u.SCID)
	if err != nil {
		return nil, fmt.Errorf("%w: channel update: %v", ErrProtocol, err)
	}
	upd := &lnwire.ChannelUpdate1{
		ShortChannelID:  lnwire.NewShortChanIDFromInt(id),
		Timestamp:       u.Timestamp,
		MessageFlags:    lnwire.ChanUpdateMsgFlags(u.MessageFlags),
		ChannelFlags:    lnwire.ChanUpdateChanFlags(u.ChannelFlags),
		TimeLockDelta:   u.TimeLockDelta,
		HtlcMinimumMsat: lnwire.MilliSatoshi(u.HtlcMinimumMsat),
		BaseFee:         u.BaseFee,
		FeeRate:         u.FeeRate,
		HtlcMaximumMsat: lnwire.MilliSatoshi(u.HtlcMaximumMsat),
	}
	if u.ChainHash != "" {
		raw, err := hex.DecodeString(u.ChainHash)
		if err != nil || len(raw) != chainhash.HashSize {
			return nil, fmt.Errorf("%w: channel update chain_hash: want 32 bytes of hex", ErrProtocol)
		}
		copy(upd.ChainHash[:], raw)
	}
	return upd, nil
}

// rpcCodeNames are lnrpc.Failure.FailureCode's names of the failures the
// simulator's forwarding rules give.
var rpcCodeNames = map[lnwire.FailCode]string{
	lnwire.CodeTemporaryChannelFailure:          "TEMPORARY_CHANNEL_FAILURE",
	lnwire.CodeUnknownNextPeer:                  "UNKNOWN_NEXT_PEER",
	lnwire.CodeFeeInsufficient:                  "FEE_INSUFFICIENT",
	lnwire.CodeAmountBelowMinimum:               "AMOUNT_BELOW_MINIMUM",
	lnwire.CodeIncorrectCltvExpiry:              "INCORRECT_CLTV_EXPIRY",
	lnwire.CodeExpiryTooSoon:                    "EXPIRY_TOO_SOON",
	lnwire.CodeExpiryTooFar:                     "EXPIRY_TOO_FAR",
	lnwire.CodeChannelDisabled:                  "CHANNEL_DISABLED",
	lnwire.CodeIncorrectOrUnknownPaymentDetails: "INCORRECT_OR_UNKNOWN_PAYMENT_DETAILS",
	lnwire.CodeFinalIncorrectCltvExpiry:         "FINAL_INCORRECT_CLTV_EXPIRY",
	lnwire.CodeFinalIncorrectHtlcAmount:         "FINAL_INCORRECT_HTLC_AMOUNT",
	lnwire.CodeTemporaryNodeFailure:             "TEMPORARY_NODE_FAILURE",
	lnwire.CodePermanentChannelFailure:          "PERMANENT_CHANNEL_FAILURE",
	lnwire.CodeMPPTimeout:                       "MPP_TIMEOUT",
}

// CodeName is lnrpc's name of a failure, as a real lnd reports it; lnd's
// own name for a code lnrpc does not list.
func CodeName(f lnwire.FailureMessage) string {
	if name, ok := rpcCodeNames[f.Code()]; ok {
		return name
	}
	return f.Code().String()
}
