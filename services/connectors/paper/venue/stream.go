package venue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// StreamDepth is how many book levels per side a tick carries.
const StreamDepth = 100

// StreamInterval is how often a session sends ticks of every subscribed
// market (or a heartbeat with none) when no mark was set in between.
const StreamInterval = 250 * time.Millisecond

// StreamRequest is a client's message on GET /v1/stream: op "subscribe"
// or "unsubscribe" with market symbols.
type StreamRequest struct {
	Op      string   `json:"op"`
	Markets []string `json:"markets"`
}

// StreamFrame is a server message on GET /v1/stream: type "tick" with a
// market's state, or "heartbeat". Time is Unix ms.
type StreamFrame struct {
	Type            string               `json:"type"`
	Time            int64                `json:"time"`
	Market          string               `json:"market,omitempty"`
	MarkPrice       decimal.Decimal      `json:"markPrice,omitzero"`
	IndexPrice      decimal.Decimal      `json:"indexPrice,omitzero"`
	FundingRate     decimal.Decimal      `json:"fundingRate,omitzero"`
	NextFundingTime int64                `json:"nextFundingTime,omitempty"` // Unix seconds
	OpenInterest    decimal.Decimal      `json:"openInterest,omitzero"`
	Bids            [][2]decimal.Decimal `json:"bids,omitempty"`
	Asks            [][2]decimal.Decimal `json:"asks,omitempty"`
}

// Session is one stream subscriber's state, on the venue's side: the
// websocket route serves one per socket, and the standalone gateway reads
// one in process.
type Session struct {
	e        *paper.Engine
	interval time.Duration

	mu      sync.Mutex
	subs    map[string]bool
	wake    chan struct{} // a subscription changed
	pending []StreamFrame
	closed  chan struct{}
	once    sync.Once
}

// NewSession returns a session on e sending every interval (StreamInterval
// when zero).
func NewSession(e *paper.Engine, interval time.Duration) *Session {
	if interval <= 0 {
		interval = StreamInterval
	}
	return &Session{e: e, interval: interval, subs: map[string]bool{}, wake: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Subscribe adds markets; unknown ones are ignored (ticks name what exists).
func (s *Session) Subscribe(_ context.Context, markets []string) error {
	s.mu.Lock()
	for _, m := range markets {
		s.subs[m] = true
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// Unsubscribe drops markets.
func (s *Session) Unsubscribe(_ context.Context, markets []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range markets {
		delete(s.subs, m)
	}
	return nil
}

// Close ends the session; Next then fails.
func (s *Session) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// ErrStreamClosed is Next's error after Close.
var ErrStreamClosed = errors.New("paper venue: stream closed")

// Next returns the next frame: ticks of every subscribed market when the
// interval passes, a mark is set or a market is subscribed; a heartbeat
// when none is subscribed.
func (s *Session) Next(ctx context.Context) (StreamFrame, error) {
	for {
		s.mu.Lock()
		if len(s.pending) > 0 {
			f := s.pending[0]
			s.pending = s.pending[1:]
			s.mu.Unlock()
			return f, nil
		}
		s.mu.Unlock()
		t := time.NewTimer(s.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return StreamFrame{}, ctx.Err()
		case <-s.closed:
			t.Stop()
			return StreamFrame{}, ErrStreamClosed
		case <-t.C:
		case <-s.e.Changed():
		case <-s.wake:
		}
		t.Stop()
		s.fill()
	}
}

// fill queues a tick per subscribed market, or one heartbeat.
func (s *Session) fill() {
	s.mu.Lock()
	subs := make([]string, 0, len(s.subs))
	for m := range s.subs {
		subs = append(subs, m)
	}
	s.mu.Unlock()
	var frames []StreamFrame
	for _, sym := range subs {
		if f, ok := s.tick(sym); ok {
			frames = append(frames, f)
		}
	}
	if len(frames) == 0 {
		frames = append(frames, StreamFrame{Type: "heartbeat", Time: time.Now().UnixMilli()})
	}
	s.mu.Lock()
	s.pending = append(s.pending, frames...)
	s.mu.Unlock()
}

func (s *Session) tick(sym string) (StreamFrame, bool) {
	m, err := s.e.Market(sym)
	if err != nil {
		return StreamFrame{}, false
	}
	b, err := s.e.Orderbook(sym, StreamDepth)
	if err != nil {
		return StreamFrame{}, false
	}
	return StreamFrame{Type: "tick", Time: time.Now().UnixMilli(), Market: m.Symbol, MarkPrice: m.MarkPrice,
		IndexPrice: m.IndexPrice, FundingRate: m.FundingRate, NextFundingTime: m.NextFundingTime.Unix(),
		OpenInterest: m.OpenInterest, Bids: levels(b.Bids), Asks: levels(b.Asks)}, true
}
