package paper

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// Feeder is connector-paper's adapter in the distributed deployment: the
// Adapter, and each account's private stream, which the paper venue
// publishes on NATS as a venue does on its private websocket. (perpgate
// serve publishes the in-process venue's events itself, so it uses the
// plain Adapter.)
type Feeder struct {
	*Adapter
	nc       *nats.Conn
	subjects contract.Subjects
}

var _ connector.AccountFeeder = (*Feeder)(nil)

// NewFeeder follows the venue's private streams on nc.
func NewFeeder(a *Adapter, nc *nats.Conn, subjects contract.Subjects) *Feeder {
	return &Feeder{Adapter: a, nc: nc, subjects: subjects}
}

// FollowAccount implements connector.AccountFeeder. A secret the venue
// cannot use is its refused login.
func (f *Feeder) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	acct, err := f.account(ctx, c)
	if err != nil {
		return err
	}
	return venue.FollowAccount(ctx, f.nc, f.subjects, acct, ready, func(ev paper.Event) {
		if data, ok := venue.EventData(ev); ok {
			emit(connector.AccountEvent{Time: ev.Time, Data: data})
		}
	})
}
