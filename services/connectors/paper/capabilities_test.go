package paper_test

import (
	"testing"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/services/connectors/paper"
)

// TestCapabilitiesDeclared: the declaration matches the adapter's code.
func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, paper.NewAdapter(nil))
}
