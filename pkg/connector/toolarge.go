package connector

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/contract"
)

// replyHeadroom is what a reply's headers may take beside its body.
const replyHeadroom = 4 << 10

// tooLarge refuses an answer of size bytes that the bus, whose messages
// carry at most maxPayload bytes, would drop: the client is told so and
// how to ask for less, rather than waiting for a reply that never comes
// (which would read as an outage).
func tooLarge(op *contract.Operation, size int, maxPayload int64) *contract.Error {
	if maxPayload <= 0 || int64(size)+replyHeadroom <= maxPayload {
		return nil
	}
	return contract.Errorf(contract.CodeInvalidRequest,
		"the answer to %s is %s, more than the %s a message of the gateway's bus (NATS max_payload) carries: "+
			"ask for less (name a market, or a smaller limit), or have the operator raise max_payload",
		op.Name, mib(int64(size)), mib(maxPayload))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
