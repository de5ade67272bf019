package venuekit

import "github.com/perpgate/perpgate/pkg/connector"

// EveryField is connector.Amender's Amendable for a venue that amends
// every field an order type has: a limit order's price and size, a
// trigger order's size and trigger price.
func EveryField(t connector.OrderType) []string {
	if t == connector.Stop {
		return []string{connector.FieldSize, connector.FieldTriggerPrice}
	}
	return []string{connector.FieldPrice, connector.FieldSize}
}
