package paper

import (
	"context"
	"errors"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

var _ connector.Streamer = (*Adapter)(nil)

// venueStream is a stream session of the venue: its websocket, or in
// standalone the engine's own session in process.
type venueStream interface {
	Subscribe(ctx context.Context, markets []string) error
	Unsubscribe(ctx context.Context, markets []string) error
	Next(ctx context.Context) (venue.StreamFrame, error)
	Close() error
}

// StreamFromEngine makes the adapter read its market stream from e in
// process (standalone, where the venue has no socket); REST still goes
// through the venue client.
func (a *Adapter) StreamFromEngine(e *paper.Engine) *Adapter {
	a.local = e
	return a
}

// DialStream implements connector.Streamer. The paper venue has one
// network, so env does not matter.
func (a *Adapter) DialStream(ctx context.Context, _ contract.Environment) (connector.StreamConn, error) {
	if a.local != nil {
		return streamConn{venue.NewSession(a.local, 0)}, nil
	}
	s, err := a.venue.DialStream(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return streamConn{s}, nil
}

// BookSnapshot implements connector.Streamer: paper ticks carry whole
// books, so there is never a gap to resync.
func (a *Adapter) BookSnapshot(context.Context, contract.Environment, string, int) (connector.BookUpdate, error) {
	return connector.BookUpdate{}, errors.New("paper stream sends whole books")
}

type streamConn struct{ venueStream }

func (c streamConn) Next(ctx context.Context) (connector.StreamEvent, error) {
	f, err := c.venueStream.Next(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	return eventFromFrame(f), nil
}

func eventFromFrame(f venue.StreamFrame) connector.StreamEvent {
	if f.Type != "tick" {
		return connector.StreamEvent{}
	}
	return connector.StreamEvent{
		Market: f.Market,
		Mark: &connector.MarkUpdate{MarkPrice: decimal.NewNullDecimal(f.MarkPrice),
			IndexPrice: decimal.NewNullDecimal(f.IndexPrice)},
		Funding: &connector.FundingUpdate{Rate: decimal.NewNullDecimal(f.FundingRate), NextFundingTime: f.NextFundingTime,
			OpenInterest: decimal.NewNullDecimal(f.OpenInterest)},
		Book: &connector.BookUpdate{Snapshot: true, Depth: venue.StreamDepth, Bids: levelsFromVenue(f.Bids), Asks: levelsFromVenue(f.Asks)},
	}
}

// StreamsMarketList implements connector.MarketListStreamer: ticks carry
// open interest and the venue has a handful of markets.
func (a *Adapter) StreamsMarketList() bool { return true }
