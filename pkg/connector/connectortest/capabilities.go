package connectortest

import (
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
)

// CheckCapabilities fails the test when the adapter's declared
// capabilities disagree with its code: an operation it gained or lost
// (an optional interface implemented or dropped) without its declaration
// changing, a venue operation left undeclared, or features out of range.
func CheckCapabilities(t testing.TB, a connector.Adapter) {
	t.Helper()
	for _, bad := range connector.CheckDeclaration(a) {
		t.Errorf("%s capabilities: %s", a.Exchange(), bad)
	}
}
