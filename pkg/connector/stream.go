package connector

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Streamer is implemented by adapters of venues with a public market-data
// websocket. The runtime then keeps one view per network: one replica holds
// the sockets (a lease), publishes what they carry on NATS, and every
// replica answers getMarkPrice, getOrderbook, getFundingRate and
// getMarketsWithFunding from its copy while it is fresh.
type Streamer interface {
	// DialStream opens the public stream of env's network.
	DialStream(ctx context.Context, env contract.Environment) (StreamConn, error)
	// BookSnapshot reads a market's book over REST with the sequence number
	// the stream's updates continue from; called after a gap. Venues whose
	// stream sends whole books never report gaps and may return an error.
	BookSnapshot(ctx context.Context, env contract.Environment, native string, depth int) (BookUpdate, error)
}

// StreamScope is implemented by Streamers whose network's stream does not
// carry every credential's market data (Bybit demo accounts trade on their
// own prices): false sends that credential's reads to REST.
type StreamScope interface {
	StreamsFor(c Credential) bool
}

// MarketListStreamer is implemented by Streamers whose stream carries open
// interest and can hold every market at once: getMarketsWithFunding then
// subscribes them all and is answered from the view. Others answer it
// over REST (one bulk call on most venues) and subscribe nothing for it.
type MarketListStreamer interface {
	StreamsMarketList() bool
}

// StreamCapacity is implemented by Streamers whose venue caps the
// subscriptions of one socket: past MaxStreamMarkets markets the rest are
// read over REST until subscribed ones go idle.
type StreamCapacity interface {
	MaxStreamMarkets() int
}

// StreamConn is one open socket. The runtime calls Next from one goroutine
// and Subscribe/Unsubscribe/Close from another.
type StreamConn interface {
	// Subscribe asks for mark and index price, funding, open interest and
	// book of the markets (native symbols).
	Subscribe(ctx context.Context, markets []string) error
	Unsubscribe(ctx context.Context, markets []string) error
	// Next blocks for the next event. Every frame the venue sends, pongs
	// and heartbeats included, yields one, so the runtime knows the socket
	// is alive while values do not change. An error ends the socket: the
	// runtime reconnects with backoff and subscribes again.
	Next(ctx context.Context) (StreamEvent, error)
	Close() error
}

// StreamEvent is one frame of a stream; all parts nil is a heartbeat.
type StreamEvent struct {
	Market  string // native symbol
	Mark    *MarkUpdate
	Funding *FundingUpdate
	Book    *BookUpdate
}

// MarkUpdate carries the prices a frame had; an invalid one is unchanged
// (venues that send only changed fields).
type MarkUpdate struct {
	MarkPrice, IndexPrice decimal.NullDecimal
}

// FundingUpdate carries funding and open interest; invalid or zero fields
// are unchanged.
type FundingUpdate struct {
	Rate            decimal.NullDecimal
	NextFundingTime int64 // Unix seconds
	OpenInterest    decimal.NullDecimal
}

// BookUpdate is a whole book (Snapshot) or changes to one (a size of zero
// removes the level). Seq is the venue's sequence number after the update;
// Prev, when the venue gives it, is Seq of the update before, else First is
// the first sequence number the update covers. A change whose Prev (or
// First-1) is not the book's Seq is a gap, and the runtime resyncs from
// BookSnapshot. All zero: the venue has no sequence numbers.
type BookUpdate struct {
	Snapshot bool
	// Depth is how many levels per side a snapshot holds at most (the
	// venue's cap or the limit asked for); zero means the whole book.
	Depth       int
	Seq         int64
	Prev, First int64
	Bids, Asks  []contract.Level
}

// StreamConfig tunes the stream view. Zero values take the defaults.
type StreamConfig struct {
	Disabled   bool
	PriceStale time.Duration // mark price and funding older than this go to REST; 2 s
	BookStale  time.Duration // books; 1 s
	Idle       time.Duration // a market nobody read for this long is unsubscribed; 2 min
	LeaseTTL   time.Duration // a holder that stops renewing loses its sockets after this; 3 s
	MaxDepth   int           // book levels per side held and published; 100
	// Beat is how often the holder tells replicas the socket is alive and
	// replicas repeat which markets they read; 250 ms.
	Beat time.Duration
	// Silence is how long a socket may send nothing before the holder
	// drops it and dials again; 5 s.
	Silence time.Duration
	// Replica names this replica in the lease; a random id when empty.
	Replica string
	// Replicas is how many JetStream replicas the lease bucket gets
	// (PERPGATE_JETSTREAM_REPLICAS); 1 when zero.
	Replicas int
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.PriceStale <= 0 {
		c.PriceStale = 2 * time.Second
	}
	if c.BookStale <= 0 {
		c.BookStale = time.Second
	}
	if c.Idle <= 0 {
		c.Idle = 2 * time.Minute
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 3 * time.Second
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 100
	}
	if c.Silence <= 0 {
		c.Silence = 5 * time.Second
	}
	if c.Beat <= 0 {
		c.Beat = 250 * time.Millisecond
	}
	return c
}
