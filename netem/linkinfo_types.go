package netem

import (
	"pslab/netem/linkinfo"
)

// The link's plain types are linkinfo's (the record carries them without
// importing netem); netem uses them as its own.
type (
	Profile        = linkinfo.Profile
	Counters       = linkinfo.Counters
	DirCounters    = linkinfo.DirCounters
	QdiscCounters  = linkinfo.QdiscCounters
	UplinkCounters = linkinfo.UplinkCounters
	Verification   = linkinfo.Verification
	DirResult      = linkinfo.DirResult
	Direction      = linkinfo.Direction
	Backend        = linkinfo.Backend
)

// Duplex modes, directions and backends (linkinfo's).
const (
	DuplexFull     = linkinfo.DuplexFull
	DuplexHalf     = linkinfo.DuplexHalf
	DefaultQueueMs = linkinfo.DefaultQueueMs
	ToBroker       = linkinfo.ToBroker
	ToClient       = linkinfo.ToClient
	BackendNone    = linkinfo.BackendNone
	BackendNetem   = linkinfo.BackendNetem
	BackendTBFNft  = linkinfo.BackendTBFNft
)

// ErrBadProfile is returned (wrapped) for a profile file that does not
// parse or has bad values.
var ErrBadProfile = linkinfo.ErrBadProfile
