package standalone

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// startPaperEvents publishes the in-process paper venue's account events
// into the event stream (kept in the embedded server's data dir), first
// reconciling what a previous run left unpublished. In this process the
// venue and its connector are one, so it publishes as connector-paper (the
// user allowed the paper events), deduplicated as the connector's feed is.
func (g *Gateway) startPaperEvents(connect func(string) (*nats.Conn, error)) error {
	if g.paper == nil || !g.cfg.serves(contract.Paper) {
		return nil
	}
	nc, err := connect("connector-paper")
	if err != nil {
		return err
	}
	pub := events.NewPublisher(nc, g.cfg.Edge.Events(), g.log.With("service", "paper-venue"))
	if err := pub.Start(context.Background()); err != nil {
		return fmt.Errorf("paper venue events: %w", err)
	}
	reader, err := events.NewReader(nc, g.cfg.Edge.Events())
	if err != nil {
		return err
	}
	stop := venue.PublishEvents(g.paper, pub, reader.Last, g.log.With("service", "paper-venue"))
	g.onClose(func() error { stop(); pub.Close(); return nil })
	return nil
}
