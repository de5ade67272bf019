package connector

import (
	"errors"
	"fmt"

	"github.com/perpgate/perpgate/pkg/contract"
)

// A placement the venue took but whose fill could not be read back has an
// outcome nobody knows yet (DESIGN §13): it is answered as one that
// reconciliation could not settle, naming the order, and no zero fill is
// ever stored as its idempotent result.

// unsettledError marks an ambiguous upstream error (EXCHANGE_ERROR with
// reason UNKNOWN) whose order the venue has.
type unsettledError struct {
	orderID string
	ce      *contract.Error
}

func (e *unsettledError) Error() string { return e.ce.Error() }
func (e *unsettledError) Unwrap() error { return e.ce }

// FillUnread is an adapter's answer to a market order the venue took
// (orderID) whose fill it could not read back; cause says why. The runtime
// looks the order up by its clientOrderId before it answers.
func FillUnread(venue, orderID string, cause error) error {
	why := "no final state within the read-back"
	if cause != nil {
		why = cause.Error()
	}
	return &unsettledError{orderID: orderID, ce: contract.Upstream(contract.ReasonUnknown, "", "",
		"%s took market order %s but its fill could not be read back (%s)", venue, orderID, why)}
}

// marketResult turns a market order found at the venue into its result;
// one whose fill is not known yet (nothing filled and not ended, or no
// average price) is unsettled, never a zero fill.
func marketResult(o OrderRequest, f FoundOrder) (contract.MarketOrderResult, error) {
	ended := f.Status == contract.StatusCancelled || f.Status == contract.StatusRejected
	switch {
	case !f.FilledSize.IsPositive() && ended:
		return contract.MarketOrderResult{}, errVenueRejected
	case !f.FilledSize.IsPositive() || !f.AvgPrice.IsPositive():
		return contract.MarketOrderResult{}, &unsettledError{orderID: f.ID, ce: contract.Upstream(contract.ReasonUnknown, "", "",
			"market order %s is at the exchange (%s) but its fill could not be read back", f.ID, f.Status)}
	}
	return contract.MarketOrderResult{OrderID: f.ID, Market: o.Market.Canonical, Side: o.Side,
		FilledPrice: f.AvgPrice, FilledSize: f.FilledSize, Fee: f.Fee, ClientOrderID: o.ClientOrderID}, nil
}

// unsettledOutcome is the answer for a placement whose order the venue has
// but whose outcome reconciliation could not settle; ok is false when err
// is not about such an order.
func unsettledOutcome(clientID string, errs ...error) (error, bool) {
	for _, err := range errs {
		var u *unsettledError
		if errors.As(err, &u) {
			out := *u.ce
			out.Message = fmt.Sprintf("%s; reconciliation could not settle the outcome of order %s (status %s): "+
				"repeat the call with clientOrderId %s (it will not place twice) or look it up with getOrders",
				u.ce.Message, u.orderID, contract.StatusUnknown, clientID)
			return &out, true
		}
	}
	return nil, false
}
