package paper

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// Amendable implements connector.Amender: the paper venue amends every
// field of its resting orders (PATCH /v1/accounts/{account}/orders/{id}).
func (a *Adapter) Amendable(t connector.OrderType) []string { return venuekit.EveryField(t) }

// ModifyOrder implements connector.Amender.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.Order{}, err
	}
	req := venue.AmendRequest{}
	if am.Changes(connector.FieldSize) {
		req.Size = am.After.Size
	}
	if am.Changes(connector.FieldPrice) {
		req.Price = am.After.Price
	}
	if am.Changes(connector.FieldTriggerPrice) {
		req.TriggerPrice = am.After.TriggerPrice
	}
	o, err := a.venue.AmendOrder(ctx, acct, am.OrderID, req)
	if err != nil {
		return contract.Order{}, mapError(err)
	}
	return orderFromVenue(o), nil
}
