package connector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Take-profit and stop-loss given with an entry (placeLimitOrder and
// placeMarketOrder takeProfit/stopLoss, DESIGN §13). A venue that attaches
// them to the order itself implements EntryProtectionAttacher; elsewhere
// the runtime stores the intent before the entry is sent and, as the entry
// fills, places a protection pair sized to the fill (PlaceProtectionOrders,
// watched like any pair), replacing it by a larger one on each further
// fill. Reconciliation (attachLoop) finishes what a dead connector left.

// EntryProtectionAttacher is for an adapter whose venue attaches the pair
// to the entry itself with the semantics above (one pair sized to what has
// filled, legs cancelling each other, none left by an entry cancelled
// unfilled): PlaceLimitOrder and PlaceMarketOrder then get
// OrderRequest.TakeProfit and StopLoss. No adapter implements it: Bybit
// order TP/SL, OKX attachAlgoOrds and Hyperliquid normalTpsl do not
// document that (docs/exchanges.md, "Take-profit and stop-loss with the
// entry"), so every venue gets the emulated pair.
type EntryProtectionAttacher interface {
	AttachesEntryProtection() bool
}

// attachForget is how long an entry the venue does not know is kept: its
// placement may still be settling; after it nothing was placed.
const attachForget = 2 * time.Minute

// attachMode is how this venue attaches an entry's protection.
func attachMode(a Adapter) contract.Support {
	if n, ok := a.(EntryProtectionAttacher); ok && n.AttachesEntryProtection() {
		return contract.Native
	}
	return contract.Emulated
}

// attachTriggers rounds an entry's triggers to the tick and checks that
// each is on the side of ref (the limit price, or the mark for a market
// entry) where it can protect the position the entry opens.
func attachTriggers(o *OrderRequest, ref decimal.Decimal, refName string, tp, sl *decimal.Decimal) error {
	long := o.Side == contract.Buy
	check := func(field string, p *decimal.Decimal, above bool) (*decimal.Decimal, error) {
		if p == nil {
			return nil, nil
		}
		r := nearestStep(*p, o.Market.TickSize)
		ok := r.GreaterThan(ref)
		if !above {
			ok = r.LessThan(ref)
		}
		if ok && r.IsPositive() {
			return &r, nil
		}
		where, pos := "above", "LONG"
		if !above {
			where = "below"
		}
		if !long {
			pos = "SHORT"
		}
		return nil, contract.Errorf(contract.CodeInvalidRequest,
			"field %q: %s (rounded to the tick %s) must be %s the %s %s, as the %s position of a %s entry is protected from there",
			field, r, o.Market.TickSize, where, refName, ref, pos, o.Side)
	}
	var err error
	if o.TakeProfit, err = check("takeProfit.triggerPrice", tp, long); err != nil {
		return err
	}
	o.StopLoss, err = check("stopLoss.triggerPrice", sl, !long)
	return err
}

// placeEntry places a limit or market entry with its take-profit/stop-loss.
func (d dispatch) placeEntry(ctx context.Context, o OrderRequest, market string, dryRun bool, tp, sl *decimal.Decimal) (any, error) {
	if err := d.prepare(ctx, &o, market); err != nil {
		return nil, err
	}
	ref, refName := o.Price, "limit price"
	if o.Type == MarketType {
		mp, err := d.markPrice(ctx, o.Market)
		if err != nil {
			return nil, err
		}
		if !mp.MarkPrice.IsPositive() {
			return nil, contract.Errorf(contract.CodeServiceUnavailable,
				"no mark price for %s: a market entry's takeProfit and stopLoss are judged from it, try again shortly", o.Market.Canonical)
		}
		ref, refName = mp.MarkPrice, "mark price"
	}
	if err := attachTriggers(&o, ref, refName, tp, sl); err != nil {
		return nil, err
	}
	if dryRun {
		res, err := d.placeOne(ctx, o, market, true)
		if err != nil {
			return nil, err
		}
		legs, err := d.dryRunProtection(ctx, d.pairRequest(o, 1))
		dr := res.(contract.DryRunResult)
		dr.TakeProfit, dr.StopLoss = legs.TakeProfit, legs.StopLoss
		return dr, err
	}
	return d.placeOne(ctx, o, market, false)
}

// attachIntent stores an emulated entry's intent as its placement begins
// (once per placement, not on an idempotent repeat), before the entry is
// sent: a connector that dies after the fill finds it (attachLoop).
func (d dispatch) attachIntent(ctx context.Context, o OrderRequest) error {
	if (o.TakeProfit == nil && o.StopLoss == nil) || attachMode(d.r.adapter) == contract.Native {
		return nil
	}
	e := AttachedEntry{ID: d.cred.ID + ":" + o.ClientOrderID, CredentialID: d.cred.ID, Market: o.Market.Canonical,
		EntryClientID: o.ClientOrderID, Side: positionOf(o.Side), TakeProfit: o.TakeProfit, StopLoss: o.StopLoss,
		Created: d.r.cfg.Now()}
	if _, err := d.r.attached.Add(ctx, e); err != nil {
		return d.storeDown(err)
	}
	return nil
}

// attachFailed forgets the intent of an entry the venue certainly refused.
func (d dispatch) attachFailed(ctx context.Context, o OrderRequest, err error) {
	if err != nil && !Ambiguous(err) && (o.TakeProfit != nil || o.StopLoss != nil) {
		_ = d.r.attached.Remove(context.WithoutCancel(ctx), d.cred.ID+":"+o.ClientOrderID)
	}
}

func positionOf(s contract.Side) contract.PositionSide {
	if s == contract.Sell {
		return contract.Short
	}
	return contract.Long
}

// pairRequest is generation gen of an entry's protection pair, sized to
// the whole entry.
func (d dispatch) pairRequest(o OrderRequest, gen int) ProtectionRequest {
	return ProtectionRequest{Market: o.Market, PositionSide: positionOf(o.Side), Size: o.Size,
		TakeProfit: o.TakeProfit, StopLoss: o.StopLoss, ClientOrderID: pairClientID(d.cred.ID+":"+o.ClientOrderID, gen)}
}

// pairClientID is the clientOrderId of generation gen of entry id's pair:
// derived, so a restart finds the legs it placed; short and plain, so the
// -tp/-sl legs fit every venue's id rules.
func pairClientID(entryID string, gen int) string {
	h := sha256.Sum256([]byte(entryID))
	return "ap" + hex.EncodeToString(h[:10]) + "g" + strconv.Itoa(gen)
}

// attachedResult is what a placement's answer says of its protection.
func (r *Runtime) attachedResult(o OrderRequest) *contract.AttachedProtection {
	if o.TakeProfit == nil && o.StopLoss == nil {
		return nil
	}
	return &contract.AttachedProtection{Mode: attachMode(r.adapter), TakeProfit: o.TakeProfit, StopLoss: o.StopLoss}
}

// protectNow places a market entry's pair at once, before the answer, and
// reports it; the loop retries what fails here.
func (r *Runtime) protectNow(ctx context.Context, cred Credential, o OrderRequest) *contract.AttachedProtection {
	out := r.attachedResult(o)
	if out == nil || out.Mode == contract.Native {
		return out
	}
	id := cred.ID + ":" + o.ClientOrderID
	e, err := r.syncLocked(ctx, id, time.Second)
	if err != nil {
		r.log.Warn("attached protection not placed yet; reconciliation retries", "err", err, "client_order_id", o.ClientOrderID)
	}
	if e.Gen == 0 {
		// The loop, kicked by the account feed's fill, may have placed the
		// pair and forgotten the filled entry first: read its legs back.
		e = r.placedPair(ctx, cred, o, id)
	}
	if e.Gen > 0 {
		size := e.Covered
		out.Size, out.TPOrderID, out.SLOrderID = &size, e.TPOrderID, e.SLOrderID
	}
	return out
}

// placedPair is entry id's first pair as the venue shows it, by its legs'
// derived clientOrderIds; Gen stays 0 when a wanted leg is not found.
func (r *Runtime) placedPair(ctx context.Context, cred Credential, o OrderRequest, id string) AttachedEntry {
	var e AttachedEntry
	cid := pairClientID(id, 1)
	for _, leg := range []struct {
		want *decimal.Decimal
		id   *string
		sfx  string
	}{{o.TakeProfit, &e.TPOrderID, "-tp"}, {o.StopLoss, &e.SLOrderID, "-sl"}} {
		if leg.want == nil {
			continue
		}
		f, found, err := r.adapter.FindOrder(ctx, cred, o.Market, cid+leg.sfx)
		if err != nil || !found || f.Status == contract.StatusRejected {
			return AttachedEntry{}
		}
		*leg.id, e.Covered = f.ID, f.Size
	}
	e.Gen = 1
	return e
}

// KickAttached asks the attached-protection loop to look at its entries
// now, e.g. on a fill event; it never blocks.
func (r *Runtime) KickAttached() {
	select {
	case r.attachKick <- struct{}{}:
	default:
	}
}

// attachOnEvent is the account feeds' hook: a fill, an order event
// showing a fill, or an order ending makes the loop look at cred's entries
// now rather than at its next tick.
func (r *Runtime) attachOnEvent(cred string, data any) {
	switch d := data.(type) {
	case contract.FillEvent:
	case contract.OrderEvent:
		if !d.FilledSize.IsPositive() && !d.Final() {
			return
		}
	default:
		return
	}
	r.attachMu.Lock()
	if r.attachDirty == nil {
		r.attachDirty = map[string]bool{}
	}
	r.attachDirty[cred] = true
	r.attachMu.Unlock()
	r.KickAttached()
}

// attachEventDriven reports whether cred's entries follow its feed's
// events now, so the loop does not poll them.
func (r *Runtime) attachEventDriven(cred string) bool {
	_, local := r.attached.(*MemoryAttachments)
	return r.feeds.driven(cred, !local)
}

// attachLoop syncs the attached entries once at start (a restart finishes
// what the last run began), then on each tick those whose credential's
// feed is not healthy, and on each kick those an event concerns. An entry
// whose sync failed is tried again at the next tick.
func (r *Runtime) attachLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	retry := map[string]bool{}
	r.attachPass(ctx, nil, retry)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.attachKick:
		}
		r.attachMu.Lock()
		dirty := r.attachDirty
		r.attachDirty = nil
		r.attachMu.Unlock()
		r.attachPass(ctx, func(e AttachedEntry) bool {
			if dirty[e.CredentialID] || retry[e.ID] || e.Pending > 0 || len(e.Cancel) > 0 {
				return true
			}
			if r.attachEventDriven(e.CredentialID) {
				return false
			}
			r.log.Debug("attached entry polled", "credential_id", e.CredentialID, "entry", e.EntryClientID)
			return true
		}, retry)
	}
}

// attachPass syncs the entries due (every one when due is nil) and
// records in retry those whose sync failed.
func (r *Runtime) attachPass(ctx context.Context, due func(AttachedEntry) bool, retry map[string]bool) {
	entries, err := r.attached.List(ctx)
	if err != nil {
		r.log.Warn("attached entries not listed", "err", err)
		return
	}
	if due != nil {
		entries = slices.DeleteFunc(entries, func(e AttachedEntry) bool { return !due(e) })
	}
	quiet := r.quietEntries(ctx, entries)
	clear(retry)
	for _, e := range entries {
		if quiet[e.ID] {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := r.syncLocked(cctx, e.ID, 0); err != nil {
			retry[e.ID] = true
			r.log.Warn("attached protection not synced", "err", err, "credential_id", e.CredentialID, "entry", e.EntryClientID)
		}
		cancel()
	}
}

// syncLocked syncs entry id under its lock, waiting up to wait for it.
// The entry returned is the state after the sync (zero when unknown).
func (r *Runtime) syncLocked(ctx context.Context, id string, wait time.Duration) (AttachedEntry, error) {
	until := time.Now().Add(wait)
	for {
		ok, err := r.attached.Lock(ctx, id, 30*time.Second)
		if err != nil {
			return AttachedEntry{}, err
		}
		if ok {
			break
		}
		if time.Now().After(until) {
			return AttachedEntry{}, nil // another replica has it
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer func() { _ = r.attached.Unlock(context.WithoutCancel(ctx), id) }()
	e, found, err := r.attached.Get(ctx, id)
	if err != nil || !found {
		return e, err
	}
	return e, r.syncEntry(ctx, &e)
}

// syncEntry brings an entry's pair up to what has filled, and forgets the
// entry once it is done and covered.
func (r *Runtime) syncEntry(ctx context.Context, e *AttachedEntry) error {
	cred, err := r.secrets.get(ctx, e.CredentialID)
	var ce *contract.Error
	if errors.As(err, &ce) && ce.Code == contract.CodeCredentialNotFound {
		return r.attached.Remove(ctx, e.ID)
	}
	if err != nil {
		return err
	}
	m, err := r.markets.resolve(ctx, r.adapter, cred, e.Market)
	if err != nil {
		return err
	}
	f, found, err := r.adapter.FindOrder(ctx, cred, m, e.EntryClientID)
	if err != nil {
		return err
	}
	if !found || f.Status == contract.StatusRejected {
		if e.Gen == 0 && e.Pending == 0 && (f.Status == contract.StatusRejected || r.cfg.Now().Sub(e.Created) > attachForget) {
			return r.attached.Remove(ctx, e.ID) // nothing was placed
		}
		return nil
	}
	filled := f.FilledSize
	if f.Status == contract.StatusFilled && !filled.IsPositive() {
		filled = f.Size // the venue says filled without the figure
	}
	filled = floorStep(filled, m.LotSize)
	if e.Pending > 0 || filled.GreaterThan(e.Covered) {
		if err := r.resizePair(ctx, cred, m, e, filled); err != nil {
			return err
		}
	}
	r.cancelReplaced(ctx, cred, m, e)
	done := f.Status == contract.StatusFilled || f.Status == contract.StatusCancelled
	if done && len(e.Cancel) == 0 && !filled.GreaterThan(e.Covered) {
		return r.attached.Remove(ctx, e.ID)
	}
	return nil
}

// resizePair places the pair of the next generation for size (or settles
// one whose placement a crash interrupted) and queues the old legs for
// cancellation. The new pair stands before the old one goes, so the fill
// is never unprotected; reduce-only keeps the two from over-closing.
func (r *Runtime) resizePair(ctx context.Context, cred Credential, m Market, e *AttachedEntry, size decimal.Decimal) error {
	req := ProtectionRequest{Market: m, PositionSide: e.Side, TakeProfit: e.TakeProfit, StopLoss: e.StopLoss}
	var res contract.ProtectionResult
	if e.Pending > 0 { // placed before a crash, or not: look first
		req.ClientOrderID = pairClientID(e.ID, e.Pending)
		found, ok, err := r.findPair(ctx, cred, m, req)
		if err != nil {
			return err
		}
		if ok {
			res = found.(contract.ProtectionResult)
			r.log.Info("attached protection pair found after a restart", "credential_id", e.CredentialID, "entry", e.EntryClientID)
		}
	}
	if res.TPOrderID == "" && res.SLOrderID == "" {
		if !size.IsPositive() {
			e.Pending = 0
			return r.attached.Put(ctx, *e)
		}
		e.Pending = e.Gen + 1
		req.ClientOrderID, req.Size = pairClientID(e.ID, e.Pending), size
		if err := r.attached.Put(ctx, *e); err != nil {
			return err
		}
		var err error
		if res, err = r.adapter.PlaceProtectionOrders(ctx, cred, req); err != nil {
			if !Ambiguous(err) {
				e.Pending = 0 // nothing stands; the next round tries again
				_ = r.attached.Put(ctx, *e)
			}
			return fmt.Errorf("place the pair for %s filled: %w", size, err)
		}
	} else if f, ok, _ := r.adapter.FindOrder(ctx, cred, m, req.ClientOrderID+legSuffix(res)); ok {
		size = f.Size // what the pair placed before the crash covers
	}
	for _, id := range []string{e.TPOrderID, e.SLOrderID} {
		if id != "" && !contains(e.Cancel, id) {
			e.Cancel = append(e.Cancel, id)
		}
	}
	e.Gen, e.Pending, e.Covered, e.TPOrderID, e.SLOrderID = e.Pending, 0, size, res.TPOrderID, res.SLOrderID
	if err := r.attached.Put(ctx, *e); err != nil {
		return err
	}
	r.watchProtection(ctx, cred, m, req.ClientOrderID, res)
	r.log.Info("attached protection placed", "credential_id", e.CredentialID, "entry", e.EntryClientID,
		"size", size.String(), "generation", e.Gen)
	return nil
}

func legSuffix(res contract.ProtectionResult) string {
	if res.TPOrderID != "" {
		return "-tp"
	}
	return "-sl"
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// cancelReplaced cancels the legs of replaced pairs; a leg the venue no
// longer has open (fired, or cancelled with its sibling) is done too.
func (r *Runtime) cancelReplaced(ctx context.Context, cred Credential, m Market, e *AttachedEntry) {
	if len(e.Cancel) == 0 {
		return
	}
	orders, err := r.adapter.GetOrders(ctx, cred, &m)
	if err != nil {
		return
	}
	open := map[string]bool{}
	for _, o := range orders.Orders {
		open[o.ID] = true
	}
	var left []string
	for _, id := range e.Cancel {
		if !open[id] {
			continue
		}
		if err := r.adapter.CancelOrder(ctx, cred, id, &m); err != nil {
			r.log.Warn("replaced protection leg not cancelled yet", "err", err, "order_id", id)
			left = append(left, id)
		}
	}
	e.Cancel = left
	_ = r.attached.Put(ctx, *e)
}

// findPair looks a protection pair up by its legs' clientOrderIds. A half
// pair is cancelled, so that placing again leaves one pair.
func (r *Runtime) findPair(ctx context.Context, cred Credential, m Market, req ProtectionRequest) (any, bool, error) {
	var res contract.ProtectionResult
	for _, leg := range []struct {
		want bool
		id   *string
		sfx  string
	}{{req.TakeProfit != nil, &res.TPOrderID, "-tp"}, {req.StopLoss != nil, &res.SLOrderID, "-sl"}} {
		if !leg.want {
			continue
		}
		f, found, err := r.adapter.FindOrder(ctx, cred, m, req.ClientOrderID+leg.sfx)
		if err != nil {
			return nil, false, err
		}
		if found && f.Status != contract.StatusRejected {
			*leg.id = f.ID
		}
	}
	whole := (req.TakeProfit == nil || res.TPOrderID != "") && (req.StopLoss == nil || res.SLOrderID != "")
	if whole {
		return res, true, nil
	}
	for _, id := range []string{res.TPOrderID, res.SLOrderID} {
		if id == "" {
			continue
		}
		if err := r.adapter.CancelOrder(ctx, cred, id, &m); err != nil {
			return nil, false, contract.Upstream(contract.ReasonUnknown, "", "",
				"half of the protection pair %s stands and could not be cancelled: %v", req.ClientOrderID, err)
		}
	}
	return nil, false, nil
}

// withProtection adds an entry's protection to a result found at the venue.
func withProtection(res any, p *contract.AttachedProtection) any {
	switch r := res.(type) {
	case contract.LimitOrderResult:
		r.Protection = p
		return r
	case contract.MarketOrderResult:
		r.Protection = p
		return r
	}
	return res
}

// quietEntries are the entries the open orders show resting with nothing
// filled beyond what their pair covers: one order listing per credential
// and market instead of a look-up per entry. Entries it cannot tell of
// (the venue lists no clientOrderId, the listing fails) are looked up.
func (r *Runtime) quietEntries(ctx context.Context, entries []AttachedEntry) map[string]bool {
	quiet := map[string]bool{}
	groups := map[[2]string][]AttachedEntry{}
	for _, e := range entries {
		if e.Pending == 0 && len(e.Cancel) == 0 {
			k := [2]string{e.CredentialID, e.Market}
			groups[k] = append(groups[k], e)
		}
	}
	for k, group := range groups {
		if len(group) < 2 {
			continue // a listing costs as much as a look-up
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		open, err := r.openByClientID(cctx, k[0], k[1])
		cancel()
		if err != nil {
			continue
		}
		for _, e := range group {
			if o, ok := open[e.EntryClientID]; ok && !o.FilledSize.GreaterThan(e.Covered) {
				quiet[e.ID] = true
			}
		}
	}
	return quiet
}

func (r *Runtime) openByClientID(ctx context.Context, credID, market string) (map[string]contract.Order, error) {
	cred, err := r.secrets.get(ctx, credID)
	if err != nil {
		return nil, err
	}
	m, err := r.markets.resolve(ctx, r.adapter, cred, market)
	if err != nil {
		return nil, err
	}
	orders, err := r.adapter.GetOrders(ctx, cred, &m)
	if err != nil {
		return nil, err
	}
	out := map[string]contract.Order{}
	for _, o := range orders.Orders {
		if o.ClientOrderID != "" && o.Status == contract.StatusOpen {
			out[o.ClientOrderID] = o
		}
	}
	return out, nil
}
