package connector

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/shopspring/decimal"
)

// feedState is what a feed last published of a credential: the states of
// its orders not yet final, its positions, its fills. Reconcile compares
// REST answers with it and publishes only what differs.
type feedState struct {
	orders    map[string]contract.OrderEvent    // order id -> last state, final ones dropped
	positions map[string]contract.PositionEvent // canonical market -> last state
	fills     map[string]bool                   // fill ids published
	lastFill  time.Time                         // venue time of the newest fill published; zero: none
	markets   map[string]bool                   // every market the credential's events named: where fills may be
	done      map[string]bool                   // orders published in a final state
	loaded    bool                              // what the stream holds was read back
}

func newFeedState() *feedState {
	return &feedState{orders: map[string]contract.OrderEvent{}, positions: map[string]contract.PositionEvent{},
		fills: map[string]bool{}, markets: map[string]bool{}, done: map[string]bool{}}
}

// active reports open orders or positions: the feed stays open for them.
func (s *feedState) active() bool {
	if len(s.orders) > 0 {
		return true
	}
	for _, p := range s.positions {
		if p.Side != contract.PositionFlat && p.Size.IsPositive() {
			return true
		}
	}
	return false
}

func (s *feedState) apply(t time.Time, data any) {
	switch d := data.(type) {
	case contract.OrderEvent:
		s.markets[d.Market] = true
		if d.Final() {
			delete(s.orders, d.OrderID)
			if len(s.done) > 200_000 {
				clear(s.done)
			}
			s.done[d.OrderID] = true
		} else {
			s.orders[d.OrderID] = d
		}
	case contract.PositionEvent:
		s.markets[d.Market] = true
		s.positions[d.Market] = d
	case contract.FillEvent:
		s.markets[d.Market] = true
		if len(s.fills) > 200_000 {
			clear(s.fills) // the stream's deduplication still covers the last two minutes
		}
		s.fills[d.FillID] = true
		if t.After(s.lastFill) {
			s.lastFill = t
		}
	}
}

// noHistoryWindow bounds the fills a credential's first feed publishes:
// those of the minute its feed took to open, not its whole history.
const noHistoryWindow = time.Minute

// maxLoadPages bounds how much of the stream a new holder reads back.
const maxLoadPages = 200

// load applies the credential's events in the stream to st; when the
// stream cannot be read through (a cluster electing leaders), the newest
// event of each type has to do (loadLast).
func (m *accountFeeds) load(ctx context.Context, cred string, st *feedState) error {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := m.loadAll(lctx, cred, st)
	cancel()
	if err == nil {
		return nil
	}
	m.log.Warn("account feed's history not read; reconciling against the newest event of each type", "credential_id", cred, "err", err)
	return m.loadLast(ctx, cred, st)
}

func (m *accountFeeds) loadLast(ctx context.Context, cred string, st *feedState) error {
	for _, t := range []contract.EventType{contract.EventOrder, contract.EventPosition, contract.EventFill} {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ev, err := m.reader.Last(lctx, m.r.adapter.Exchange(), cred, t)
		cancel()
		if err != nil {
			return err
		}
		if ev != nil {
			if data := decodeEventData(*ev); data != nil {
				st.apply(time.UnixMilli(ev.Time), data)
			}
		}
	}
	st.loaded = true
	return nil
}

func (m *accountFeeds) loadAll(ctx context.Context, cred string, st *feedState) error {
	types := []contract.EventType{contract.EventOrder, contract.EventPosition, contract.EventFill}
	where := events.Where{}
	for range maxLoadPages {
		page, err := m.reader.Read(ctx, m.r.adapter.Exchange(), cred, types, where, contract.MaxEventsPage)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if data := decodeEventData(ev); data != nil {
				st.apply(time.UnixMilli(ev.Time), data)
			}
		}
		next, err := strconv.ParseUint(page.Next, 10, 64)
		if err != nil || len(page.Events) < contract.MaxEventsPage {
			break
		}
		where = events.Where{After: next, HasAfter: true}
	}
	st.loaded = true
	return nil
}

func decodeEventData(ev contract.Event) any {
	var err error
	switch ev.Type {
	case contract.EventOrder:
		var d contract.OrderEvent
		err = json.Unmarshal(ev.Data, &d)
		return orNil(d, err)
	case contract.EventPosition:
		var d contract.PositionEvent
		err = json.Unmarshal(ev.Data, &d)
		return orNil(d, err)
	case contract.EventFill:
		var d contract.FillEvent
		err = json.Unmarshal(ev.Data, &d)
		return orNil(d, err)
	}
	return nil
}

func orNil(d any, err error) any {
	if err != nil {
		return nil
	}
	return d
}

// publishStream publishes one event the venue pushed, its market made
// canonical; it returns the data published.
func (m *accountFeeds) publishStream(ctx context.Context, cf *credFeed, cred Credential, ev AccountEvent) (any, bool) {
	data := m.canonical(ctx, cred, ev.Data)
	if data == nil {
		return nil, false
	}
	t := ev.Time
	if t.IsZero() {
		t = m.r.cfg.Now()
	}
	if cf.state != nil && cf.state.stale(data) {
		return data, false
	}
	m.publish(cf, cred.ID, contract.SourceStream, t, data)
	return data, true
}

// stale reports an event the reconcile already went past: a fill it
// published, an order state older than the one it published (the venue's
// frames queued behind the snapshot). Clients see each order move forward.
func (s *feedState) stale(data any) bool {
	switch d := data.(type) {
	case contract.FillEvent:
		return s.fills[d.FillID]
	case contract.OrderEvent:
		if s.done[d.OrderID] {
			return true
		}
		last, ok := s.orders[d.OrderID]
		return ok && d.FilledSize.LessThan(last.FilledSize)
	}
	return false
}

func (m *accountFeeds) publish(cf *credFeed, cred, source string, t time.Time, data any) {
	if cf.state == nil {
		cf.state = newFeedState()
	}
	cf.state.apply(t, data)
	m.pub.Publish(events.New(m.r.adapter.Exchange(), cred, source, t, data))
	m.r.attachOnEvent(cred, data) // an entry's attached pair follows its fills
	m.r.unsettled.onEvent(cred, data)
	if cf.prot != nil { // the watcher learns what reconciles find too
		cf.prot.handle(data)
	}
}

// canonical is data with its market in canonical form; nil for data that
// is none of the event types.
func (m *accountFeeds) canonical(ctx context.Context, cred Credential, data any) any {
	canon := func(sym string) string {
		set, err := m.r.markets.set(ctx, m.r.adapter, cred, false)
		if err != nil || sym == "" {
			return sym
		}
		return set.canonical(sym)
	}
	switch d := data.(type) {
	case contract.OrderEvent:
		d.Market = canon(d.Market)
		return d
	case contract.FillEvent:
		d.Market = canon(d.Market)
		return d
	case contract.PositionEvent:
		d.Market = canon(d.Market)
		return d
	case contract.FundingEvent:
		d.Market = canon(d.Market)
		return d
	case contract.BalanceEvent:
		return d
	}
	return nil
}

// reconcile takes a REST snapshot once the feed is ready and publishes,
// with source "reconcile", what the stream lacks: orders whose state
// changed (those gone from the open list in their final state, where the
// venue finds them), fills after the last one published, and positions
// that differ from the last published.
func (m *accountFeeds) reconcile(ctx context.Context, cf *credFeed, cred Credential) error {
	if cf.state == nil {
		cf.state = newFeedState()
	}
	st := cf.state
	for mk := range cf.takeHints() { // kept in st should this reconcile fail
		st.markets[mk] = true
	}
	if !st.loaded {
		if err := m.load(ctx, cred.ID, st); err != nil {
			return err
		}
	}
	markets := map[string]bool{}
	for mk := range st.markets {
		markets[mk] = true
	}
	n, err := m.reconcileOrders(ctx, cf, cred, markets)
	if err != nil {
		return err
	}
	positions, err := m.r.adapter.GetPositions(ctx, cred, nil)
	if err != nil {
		return err
	}
	for i := range positions.Positions {
		positions.Positions[i].Market = m.canonical(ctx, cred, contract.FundingEvent{Market: positions.Positions[i].Market}).(contract.FundingEvent).Market
		markets[positions.Positions[i].Market] = true
	}
	k, err := m.reconcileFills(ctx, cf, cred, markets)
	if err != nil {
		return err
	}
	n += k + m.reconcilePositions(cf, cred, positions.Positions)
	m.log.Info("account feed open", "credential_id", cred.ID, "reconciled_events", n, "markets", len(markets))
	return nil
}

// reconcileOrders publishes open orders whose state differs from the last
// published, and the final state of orders no longer open.
func (m *accountFeeds) reconcileOrders(ctx context.Context, cf *credFeed, cred Credential, markets map[string]bool) (int, error) {
	res, err := m.r.adapter.GetOrders(ctx, cred, nil)
	if err != nil {
		return 0, err
	}
	st, now, n := cf.state, m.r.cfg.Now(), 0
	open := map[string]bool{}
	for _, o := range res.Orders {
		ev := m.canonical(ctx, cred, orderEventOf(o)).(contract.OrderEvent)
		open[ev.OrderID] = true
		markets[ev.Market] = true
		if last, ok := st.orders[ev.OrderID]; ok && last.Status == ev.Status && last.FilledSize.Equal(ev.FilledSize) {
			continue
		}
		m.publish(cf, cred.ID, contract.SourceReconcile, orderTime(o, now), ev)
		n++
	}
	for id, last := range st.orders {
		if open[id] {
			continue
		}
		final, ok := m.finalState(ctx, cred, last)
		if !ok {
			delete(st.orders, id) // gone, its end unknown: the fills below tell what filled
			continue
		}
		m.publish(cf, cred.ID, contract.SourceReconcile, now, final)
		n++
	}
	return n, nil
}

func orderTime(o contract.Order, now time.Time) time.Time {
	if o.CreatedAt > 0 && o.FilledSize.IsZero() { // unchanged since placed
		return time.Unix(o.CreatedAt, 0)
	}
	return now
}

// finalState looks up an order no longer open by its clientOrderId, or
// by its id where the adapter can (OrderByIDFinder).
func (m *accountFeeds) finalState(ctx context.Context, cred Credential, last contract.OrderEvent) (contract.OrderEvent, bool) {
	byID, canByID := m.r.adapter.(OrderByIDFinder)
	if last.ClientOrderID == "" && !canByID {
		return last, false
	}
	mk, err := m.r.markets.resolve(ctx, m.r.adapter, cred, last.Market)
	if err != nil {
		return last, false
	}
	var f FoundOrder
	var found bool
	if last.ClientOrderID != "" {
		f, found, err = m.r.adapter.FindOrder(ctx, cred, mk, last.ClientOrderID)
	} else {
		f, found, err = byID.FindOrderByID(ctx, cred, mk, last.OrderID)
	}
	if err != nil || !found || (f.Status != contract.StatusFilled && f.Status != contract.StatusCancelled && f.Status != contract.StatusRejected) {
		return last, false
	}
	ev := orderEventOf(f.Order)
	ev.Market, ev.ClientOrderID = last.Market, last.ClientOrderID
	if f.AvgPrice.IsPositive() {
		ev.AvgPrice = &f.AvgPrice
	}
	return ev, true
}

func orderEventOf(o contract.Order) contract.OrderEvent {
	ev := contract.OrderEvent{OrderID: o.ID, ClientOrderID: o.ClientOrderID, Market: o.Market, Side: o.Side, Type: o.Type,
		Size: o.Size, TriggerPrice: o.TriggerPrice, FilledSize: o.FilledSize, Status: o.Status, ReduceOnly: o.ReduceOnly}
	if o.Price.IsPositive() {
		p := o.Price
		ev.Price = &p
	}
	return ev
}

// reconcileFills publishes, oldest first, the fills of markets the
// credential trades that came after the last one published.
func (m *accountFeeds) reconcileFills(ctx context.Context, cf *credFeed, cred Credential, markets map[string]bool) (int, error) {
	st := cf.state
	since := st.lastFill
	if since.IsZero() {
		since = m.r.cfg.Now().Add(-noHistoryWindow)
	}
	resolved := map[string]Market{} // canonical -> market: a market named two ways is read once
	for name := range markets {
		if mk, err := m.r.markets.resolve(ctx, m.r.adapter, cred, name); err == nil {
			resolved[mk.Canonical] = mk
		} // else delisted or never a market: nothing to fetch
	}
	var missing []contract.FillEvent
	for _, mk := range resolved {
		res, err := m.r.adapter.GetFills(ctx, cred, mk, 100)
		if err != nil {
			return 0, err
		}
		for _, f := range res.Fills {
			// Unix seconds: a fill in the second of the last one is kept, its id decides.
			if st.fills[f.ID] || f.Timestamp < since.Unix() {
				continue
			}
			missing = append(missing, contract.FillEvent{FillID: f.ID, OrderID: f.OrderID, Market: mk.Canonical, Side: f.Side,
				Size: f.Size, Price: f.Price, Fee: f.Fee, FeeAsset: mk.Quote, RealizedPnl: f.RealizedPnl, Timestamp: f.Timestamp})
		}
	}
	slices.SortStableFunc(missing, func(a, b contract.FillEvent) int { return int(a.Timestamp - b.Timestamp) })
	for _, f := range missing {
		m.publish(cf, cred.ID, contract.SourceReconcile, time.Unix(f.Timestamp, 0), f)
	}
	return len(missing), nil
}

// reconcilePositions publishes positions that differ from the last
// published, and FLAT for those no longer open.
func (m *accountFeeds) reconcilePositions(cf *credFeed, cred Credential, list []contract.Position) int {
	st, now, n := cf.state, m.r.cfg.Now(), 0
	seen := map[string]bool{}
	for _, p := range list {
		if !p.Size.IsPositive() {
			continue
		}
		seen[p.Market] = true
		ev := contract.PositionEvent{Market: p.Market, Side: p.Side, Size: p.Size, EntryPrice: p.EntryPrice}
		upnl := p.UnrealizedPnl
		ev.UnrealizedPnl = &upnl
		if p.Leverage.IsPositive() {
			lev := p.Leverage
			ev.Leverage = &lev
		}
		if last, ok := st.positions[p.Market]; ok && last.Side == ev.Side && last.Size.Equal(ev.Size) && last.EntryPrice.Equal(ev.EntryPrice) {
			continue
		}
		m.publish(cf, cred.ID, contract.SourceReconcile, now, ev)
		n++
	}
	for mk, last := range st.positions {
		if seen[mk] || last.Side == contract.PositionFlat {
			continue
		}
		m.publish(cf, cred.ID, contract.SourceReconcile, now, contract.PositionEvent{Market: mk, Side: contract.PositionFlat,
			Size: decimal.Zero, EntryPrice: decimal.Zero})
		n++
	}
	return n
}
