package sim

import (
	"strconv"

	"github.com/perpgate/perpgate/pkg/paper"
)

// Aster's JSON shapes as the simulator writes them. Ids and times are
// strings in single-order and openOrders answers and numbers in batch
// answers, as recorded (fact sheet §0 #9).

type wireOrder struct {
	OrderID                 any    `json:"orderId"`
	Symbol                  string `json:"symbol"`
	Status                  string `json:"status"`
	ClientOrderID           string `json:"clientOrderId"`
	Price                   string `json:"price"`
	AvgPrice                string `json:"avgPrice,omitempty"` // Query Order and open orders only
	OrigQty                 string `json:"origQty"`
	ExecutedQty             string `json:"executedQty"`
	CumQty                  string `json:"cumQty"`
	CumQuote                string `json:"cumQuote,omitempty"` // Query Order and open orders only
	TimeInForce             string `json:"timeInForce"`
	Type                    string `json:"type"`
	ReduceOnly              bool   `json:"reduceOnly"`
	ClosePosition           bool   `json:"closePosition"`
	Side                    string `json:"side"`
	PositionSide            string `json:"positionSide"`
	StopPrice               string `json:"stopPrice"`
	WorkingType             string `json:"workingType"`
	PriceProtect            bool   `json:"priceProtect"`
	OrigType                string `json:"origType"`
	PriceMatch              string `json:"priceMatch"`
	SelfTradePreventionMode string `json:"selfTradePreventionMode"`
	GoodTillDate            int64  `json:"goodTillDate"`
	Time                    any    `json:"time"`
	UpdateTime              any    `json:"updateTime"`
}

// numeric writes the ids and times as numbers, as batch answers do.
func (w wireOrder) numeric() wireOrder {
	for _, f := range []*any{&w.OrderID, &w.Time, &w.UpdateTime} {
		if s, ok := (*f).(string); ok {
			*f, _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return w
}

func asterID(paperID string) int64 {
	n, _ := strconv.ParseInt(paperID, 10, 64)
	return n + idOffset
}

func paperID(asterID int64) string { return strconv.FormatInt(asterID-idOffset, 10) }

// orderStatus is Aster's name for a paper order state.
func orderStatus(o paper.Order) string {
	switch o.Status {
	case paper.Open:
		if o.FilledSize.IsPositive() {
			return "PARTIALLY_FILLED"
		}
		return "NEW"
	case paper.Filled:
		return "FILLED"
	case paper.Cancelled:
		if o.Reason != "" {
			return "EXPIRED"
		}
		return "CANCELED"
	case paper.Rejected:
		return "REJECTED"
	}
	return "NEW"
}

func toWireOrder(o paper.Order) wireOrder {
	tif := "GTC"
	if o.PostOnly {
		tif = "GTX"
	}
	stop := "0"
	if o.TriggerPrice.IsPositive() {
		stop = o.TriggerPrice.String()
	}
	return wireOrder{
		OrderID:                 strconv.FormatInt(asterID(o.ID), 10),
		Symbol:                  o.Market,
		Status:                  orderStatus(o),
		ClientOrderID:           o.ClientOrderID,
		Price:                   o.Price.String(),
		AvgPrice:                o.AvgFillPrice.String(),
		OrigQty:                 o.Size.String(),
		ExecutedQty:             o.FilledSize.String(),
		CumQty:                  o.FilledSize.String(),
		CumQuote:                o.FilledSize.Mul(o.AvgFillPrice).String(),
		TimeInForce:             tif,
		Type:                    string(o.Type),
		ReduceOnly:              o.ReduceOnly,
		Side:                    string(o.Side),
		PositionSide:            "BOTH",
		StopPrice:               stop,
		WorkingType:             "MARK_PRICE",
		OrigType:                string(o.Type),
		PriceMatch:              "NONE",
		SelfTradePreventionMode: "EXPIRE_MAKER",
		Time:                    strconv.FormatInt(o.CreatedAt.UnixMilli(), 10),
		UpdateTime:              strconv.FormatInt(o.UpdatedAt.UnixMilli(), 10),
	}
}

// answer is the order as New Order (RESULT) and Cancel Order return it.
func answer(o paper.Order) wireOrder { return toWireOrder(o) }

// ack is the default (ACK) answer: the order as accepted, before matching.
func ack(o paper.Order) wireOrder {
	w := answer(o)
	w.Status, w.ExecutedQty, w.CumQty = "NEW", "0", "0"
	return w
}

type filter map[string]any

type wireSymbol struct {
	Symbol            string   `json:"symbol"`
	Pair              string   `json:"pair"`
	ContractType      string   `json:"contractType"`
	DeliveryDate      int64    `json:"deliveryDate"`
	OnboardDate       int64    `json:"onboardDate"`
	Status            string   `json:"status"`
	BaseAsset         string   `json:"baseAsset"`
	QuoteAsset        string   `json:"quoteAsset"`
	MarginAsset       string   `json:"marginAsset"`
	PricePrecision    int32    `json:"pricePrecision"`
	QuantityPrecision int32    `json:"quantityPrecision"`
	UnderlyingType    string   `json:"underlyingType"`
	TriggerProtect    string   `json:"triggerProtect"`
	Filters           []filter `json:"filters"`
	OrderTypes        []string `json:"orderTypes"`
	TimeInForce       []string `json:"timeInForce"`
}
