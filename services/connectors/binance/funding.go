package binance

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
)

// Capabilities implements connector.Declarer (fapi.Capabilities):
// userTrades reaches 180 days back; open interest is per symbol.
func (a *Adapter) Capabilities() connector.Capabilities { return fapi.Capabilities(180, true) }
