package connector

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// modifyOrder (an extension operation, DESIGN §13) amends a resting order
// in place through the venue's own amend; nothing is cancelled and placed
// again. Guards judge the order after the change, and what it adds to the
// order's notional counts against maxDailyNotional.

// Amender is implemented by adapters of venues that amend resting orders.
type Amender interface {
	// Amendable lists the fields (FieldPrice, FieldSize, FieldTriggerPrice)
	// the venue amends on an order of type t.
	Amendable(t OrderType) []string
	// ModifyOrder amends the order a names to a.After (rounded, on the
	// order's own market) and returns the order as the venue then tells it.
	ModifyOrder(ctx context.Context, c Credential, a Amendment) (contract.Order, error)
}

// Fields modifyOrder can change.
const (
	FieldPrice        = "price"
	FieldSize         = "size"
	FieldTriggerPrice = "triggerPrice"
)

// Amendment is one modifyOrder as an adapter gets it.
type Amendment struct {
	OrderID string         // the venue's order id
	Before  contract.Order // the order as it stands
	After   OrderRequest   // the whole order after the change
	Changed []string       // the fields that change, in FieldPrice, FieldSize, FieldTriggerPrice order
}

// Changes reports whether the amendment changes field.
func (a Amendment) Changes(field string) bool { return slices.Contains(a.Changed, field) }

func (d dispatch) modifyOrder(ctx context.Context, p *contract.ModifyOrderParams) (any, error) {
	am, ok := d.r.adapter.(Amender)
	if !ok {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "%s has no native amend: cancel the order and place a new one", d.r.adapter.Exchange())
	}
	m, err := d.market(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	if err := d.allowMarket(m); err != nil {
		return nil, err
	}
	cur, err := d.openOrder(ctx, m, p)
	if err != nil {
		return nil, err
	}
	a, err := amendment(am, m, cur, p)
	if err != nil {
		return nil, err
	}
	if err := roundOrder(&a.After); err != nil {
		return nil, err
	}
	if a.After.Size.LessThanOrEqual(cur.FilledSize) {
		return nil, contract.Errorf(contract.CodeInvalidRequest,
			"size %s is not above the %s already filled of order %s: the new size is the order's total, filled part included", a.After.Size, cur.FilledSize, a.OrderID)
	}
	a.Changed = changedFields(cur, a.After)
	if len(a.Changed) == 0 && !p.DryRun {
		// A repeat of a modify that is already in effect: nothing to send.
		cur.Market = m.Canonical
		return cur, nil
	}
	if err := d.minNotionalAtMark(ctx, a.After); err != nil {
		return nil, err
	}
	if a.After.Type == Stop { // the mark tells a venue the stop's direction
		if err := d.markStop(ctx, &a.After); err != nil {
			return nil, err
		}
	}
	return d.amend(ctx, am, a, p.DryRun)
}

// amend judges the amended order, counts what it adds to the daily
// notional and sends it (or, for a dry run, shows it).
func (d dispatch) amend(ctx context.Context, am Amender, a Amendment, dryRun bool) (any, error) {
	after, err := d.judge(ctx, a.After, dryRun)
	if err != nil {
		return nil, err
	}
	raised := after // what the change adds to the day's notional
	if d.needsNotional(dryRun) {
		beforePrice, err := d.guardPrice(ctx, orderRequestOf(a.After.Market, a.Before))
		if err != nil {
			return nil, err
		}
		raised.notional = decimal.Max(decimal.Zero, after.notional.Sub(a.Before.Size.Mul(beforePrice)))
		// Each amendment counts on its own: the same change made twice
		// (down and up again) raises the day's total twice.
		raised.ClientOrderID = "modify:" + a.OrderID + ":" + uuid.NewString()
	}
	if err := d.amendedExposure(ctx, after, a.Before); err != nil {
		return nil, err
	}
	if dryRun {
		if err := d.peekDaily(ctx, raised, decimal.Zero); err != nil {
			return nil, err
		}
		return contract.DryRunResult{DryRun: true, DryRunOrder: dryRunOrder(after)}, nil
	}
	release, err := d.reserveDaily(ctx, raised)
	if err != nil {
		return nil, err
	}
	res, err := am.ModifyOrder(ctx, d.cred, a)
	if err != nil {
		if !Ambiguous(err) {
			release()
		}
		return nil, err
	}
	res.Market = a.After.Market.Canonical
	if res.ID == "" {
		res.ID = a.OrderID
	}
	if res.ClientOrderID == "" {
		res.ClientOrderID = a.Before.ClientOrderID
	}
	return res, nil
}

// amendedExposure applies maxLeverage and maxPositionNotional to the order
// after the change: the order itself is left out of the resting orders at
// its old value, whether or not the venue lists it with its client id.
func (d dispatch) amendedExposure(ctx context.Context, after priced, before contract.Order) error {
	pending := decimal.Zero
	if d.guards != nil && d.guards.MaxPositionNotional != nil && !after.ReduceOnly {
		mark, err := d.guardMark(ctx, after.Market)
		if err != nil {
			return err
		}
		left := before.Size.Sub(before.FilledSize)
		pending = left.Mul(restingPrice(before, mark, d.r.cfg.Guards.MarketSlippageBps)).Neg()
	}
	after.ClientOrderID = "" // so that restingNotional counts the order as it stands
	return d.checkExposure(ctx, after, pending)
}

// openOrder finds the order to amend among the open ones, by orderId or
// clientOrderId.
func (d dispatch) openOrder(ctx context.Context, m Market, p *contract.ModifyOrderParams) (contract.Order, error) {
	open, err := d.r.adapter.GetOrders(ctx, d.cred, &m)
	if err != nil {
		return contract.Order{}, err
	}
	i := slices.IndexFunc(open.Orders, func(o contract.Order) bool {
		if p.OrderID != "" {
			return o.ID == p.OrderID
		}
		return o.ClientOrderID == p.ClientOrderID
	})
	if i < 0 && p.ClientOrderID != "" {
		// Venues that map client ids do not list them: ask by the id.
		f, found, err := d.r.adapter.FindOrder(ctx, d.cred, m, p.ClientOrderID)
		if err != nil {
			return contract.Order{}, err
		}
		if found && (f.Status == contract.StatusOpen || f.Status == contract.StatusPending) {
			f.ClientOrderID = p.ClientOrderID
			return f.Order, nil
		}
	}
	if i < 0 {
		ref := "orderId " + p.OrderID
		if p.OrderID == "" {
			ref = "clientOrderId " + p.ClientOrderID
		}
		return contract.Order{}, contract.Upstream(contract.ReasonOrderNotFound, "", "",
			"no open order with %s on %s: only open or pending orders can be modified (see getOrders)", ref, m.Canonical)
	}
	return open.Orders[i], nil
}

// amendment builds the order after the change and refuses a field the
// order has not or the venue cannot amend.
func amendment(am Amender, m Market, cur contract.Order, p *contract.ModifyOrderParams) (Amendment, error) {
	before := orderRequestOf(m, cur)
	after := before
	kind := "limit"
	if before.Type == Stop {
		kind = "stop-market"
	}
	can := am.Amendable(before.Type)
	for _, f := range []struct {
		name string
		v    decimal.Decimal
		dst  *decimal.Decimal
		has  bool
	}{
		{FieldPrice, p.Price, &after.Price, before.Type == Limit},
		{FieldSize, p.Size, &after.Size, true},
		{FieldTriggerPrice, p.TriggerPrice, &after.TriggerPrice, before.Type == Stop},
	} {
		if f.v.IsZero() {
			continue
		}
		if !f.has {
			return Amendment{}, contract.Errorf(contract.CodeInvalidRequest,
				"field %q does not apply: order %s is a %s order", f.name, cur.ID, kind)
		}
		if !slices.Contains(can, f.name) {
			return Amendment{}, contract.Errorf(contract.CodeInvalidRequest,
				"field %q cannot be amended on %s for a %s order (amendable: %s); cancel the order and place a new one",
				f.name, m.Canonical, kind, fieldList(can))
		}
		*f.dst = f.v
	}
	return Amendment{OrderID: cur.ID, Before: cur, After: after}, nil
}

func fieldList(fields []string) string {
	if len(fields) == 0 {
		return "none"
	}
	return strings.Join(fields, ", ")
}

// orderRequestOf is a resting order as an OrderRequest on market m.
func orderRequestOf(m Market, o contract.Order) OrderRequest {
	r := OrderRequest{Market: m, Type: Limit, Side: o.Side, Size: o.Size, Price: o.Price,
		ReduceOnly: o.ReduceOnly, ClientOrderID: o.ClientOrderID}
	if o.TriggerPrice != nil {
		r.Type, r.TriggerPrice, r.Price = Stop, *o.TriggerPrice, decimal.Zero
	}
	return r
}

// changedFields lists what a changes on cur.
func changedFields(cur contract.Order, a OrderRequest) []string {
	var out []string
	if a.Type == Limit && !a.Price.Equal(cur.Price) {
		out = append(out, FieldPrice)
	}
	if !a.Size.Equal(cur.Size) {
		out = append(out, FieldSize)
	}
	if a.Type == Stop && cur.TriggerPrice != nil && !a.TriggerPrice.Equal(*cur.TriggerPrice) {
		out = append(out, FieldTriggerPrice)
	}
	return out
}

// Amended is the order after a as the venue lists it among open; when it
// is not listed (filled meanwhile, or the read failed) it is the order as
// it was asked to be.
func (a Amendment) Amended(open []contract.Order) contract.Order {
	for _, o := range open {
		if o.ID == a.OrderID {
			return o
		}
	}
	out := a.Before
	out.Size, out.Price = a.After.Size, a.After.Price
	if a.After.Type == Stop {
		t := a.After.TriggerPrice
		out.TriggerPrice = &t
	}
	return out
}
