package connector

import (
	"context"
	"sort"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// book is a held order book: levels by price, and the venue's sequence
// number after the last update applied.
type book struct {
	seq        int64
	cap        int // levels per side the venue keeps us informed of; 0: all
	bids, asks map[string]contract.Level
	// fromREST: the book is a REST snapshot, so the first update may span
	// it (Binance: U <= lastUpdateId+1 <= u) rather than continue it.
	fromREST bool
}

func newBook(u BookUpdate) *book {
	b := &book{seq: u.Seq, cap: u.Depth, bids: map[string]contract.Level{}, asks: map[string]contract.Level{}}
	b.apply(u)
	return b
}

func (b *book) apply(u BookUpdate) {
	set := func(side map[string]contract.Level, levels []contract.Level) {
		for _, l := range levels {
			k := l[0].String()
			if l[1].IsZero() {
				delete(side, k)
			} else {
				side[k] = l
			}
		}
	}
	set(b.bids, u.Bids)
	set(b.asks, u.Asks)
	if u.Seq != 0 {
		b.seq = u.Seq
	}
	if !u.Snapshot {
		b.fromREST = false
	}
}

// follows reports whether u continues the book without a gap.
func (b *book) follows(u BookUpdate) bool {
	switch {
	case u.Seq == 0: // the venue has no sequence numbers
		return true
	case b.fromREST:
		return (u.First == 0 || u.First <= b.seq+1) && u.Seq > b.seq
	case u.Prev != 0:
		return u.Prev == b.seq
	case u.First != 0:
		return u.First <= b.seq+1 && u.Seq > b.seq
	}
	return u.Seq > b.seq
}

// part is the top depth levels per side, best first.
func (b *book) part(depth int) *bookPart {
	side := func(m map[string]contract.Level, desc bool) []contract.Level {
		out := make([]contract.Level, 0, len(m))
		for _, l := range m {
			out = append(out, l)
		}
		sort.Slice(out, func(i, j int) bool {
			if desc {
				return out[i][0].GreaterThan(out[j][0])
			}
			return out[i][0].LessThan(out[j][0])
		})
		return out[:min(depth, len(out))]
	}
	bids, asks := side(b.bids, true), side(b.asks, false)
	d := depth
	switch {
	case b.cap > 0:
		d = min(depth, b.cap)
	case len(b.bids) < depth && len(b.asks) < depth:
		d = int(^uint(0) >> 1) // the whole book: any depth is answered
	}
	return &bookPart{Synced: true, Depth: d, Bids: bids, Asks: asks}
}

// bookUpdate applies u and returns what to publish: the book, or unsynced
// while a snapshot is fetched after a gap (or before the first snapshot of
// a venue that streams only changes).
func (h *holder) bookUpdate(ctx context.Context, market string, m *heldMarket, u BookUpdate) *bookPart {
	depth := h.f.s.cfg.MaxDepth
	switch {
	case u.Snapshot:
		m.book, m.pending, m.resync = newBook(u), nil, false
		return m.book.part(depth)
	case m.resync:
		m.pending = append(m.pending, u)
		return nil
	case m.book != nil && m.book.fromREST && u.Seq != 0 && u.Seq <= m.book.seq:
		return nil // already in the snapshot
	case m.book != nil && m.book.follows(u):
		m.book.apply(u)
		return m.book.part(depth)
	}
	if m.book != nil {
		h.f.s.log.Info("stream book gap; resyncing from REST", "env", h.f.env, "market", market, "seq", m.book.seq,
			"prev", u.Prev, "first", u.First)
	}
	m.book, m.pending, m.resync = nil, []BookUpdate{u}, true
	go h.snapshot(ctx, market)
	return &bookPart{Synced: false}
}

func (h *holder) snapshot(ctx context.Context, market string) {
	sctx, cancel := context.WithTimeout(telemetry.WithVenueRequests(ctx, h.f.s.metrics, string(h.f.s.x)), 10*time.Second)
	defer cancel()
	b, err := h.f.s.st.BookSnapshot(sctx, h.f.env, market, h.f.s.cfg.MaxDepth)
	select {
	case h.snapshots <- snapshotResult{market: market, book: b, err: err}:
	case <-ctx.Done():
	}
}

// resynced installs a snapshot and replays the updates that came after it.
func (h *holder) resynced(ctx context.Context, r snapshotResult) {
	m := h.held[r.market]
	if m == nil || !m.resync {
		return
	}
	if r.err != nil {
		h.f.s.log.Info("stream book snapshot failed", "env", h.f.env, "market", r.market, "err", r.err)
		m.resync, m.pending = false, nil // the next update asks again
		return
	}
	r.book.Snapshot = true
	b := newBook(r.book)
	b.fromREST = true
	for _, u := range m.pending {
		if u.Seq != 0 && u.Seq <= b.seq {
			continue // already in the snapshot
		}
		if !b.follows(u) {
			m.resync, m.pending = false, nil
			return // the snapshot is older than the stream's gap; the next update retries
		}
		b.apply(u)
	}
	m.book, m.pending, m.resync = b, nil, false
	h.publish("m."+subjectToken(r.market), streamMsg{Market: r.market, At: h.lastMsg, Up: true, Socket: h.socket, Book: b.part(h.f.s.cfg.MaxDepth)})
}
