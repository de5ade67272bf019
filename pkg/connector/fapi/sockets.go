package fapi

import (
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Sockets are a venue's websocket bases, for the market streams and the
// user data stream.
type Sockets struct {
	MainnetStreamURL, TestnetStreamURL string
}

// StreamURL is env's websocket base.
func (s Sockets) StreamURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(s.TestnetStreamURL, "/")
	}
	return strings.TrimRight(s.MainnetStreamURL, "/")
}
