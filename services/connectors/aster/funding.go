package aster

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
)

// Capabilities implements connector.Declarer (fapi.Capabilities):
// userTrades reaches 7 days back, and Aster publishes no open interest.
func (a *Adapter) Capabilities() connector.Capabilities { return fapi.Capabilities(7, false) }
