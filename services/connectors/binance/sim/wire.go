package sim

import (
	"strconv"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Binance's JSON shapes as the simulator writes them.

type wireOrder struct {
	OrderID                 int64  `json:"orderId"`
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
	Time                    int64  `json:"time"`
	UpdateTime              int64  `json:"updateTime"`
}

func binanceID(paperID string) int64 {
	n, _ := strconv.ParseInt(paperID, 10, 64)
	return n + idOffset
}

func paperID(binanceID int64) string { return strconv.FormatInt(binanceID-idOffset, 10) }

// orderStatus is Binance's name for a paper order state.
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
	return wireOrder{
		OrderID:                 binanceID(o.ID),
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
		StopPrice:               "0",
		WorkingType:             "CONTRACT_PRICE",
		OrigType:                string(o.Type),
		PriceMatch:              "NONE",
		SelfTradePreventionMode: "EXPIRE_MAKER",
		Time:                    o.CreatedAt.UnixMilli(),
		UpdateTime:              o.UpdatedAt.UnixMilli(),
	}
}

// answer is the order as New Order (RESULT), Place Multiple Orders and
// Cancel Order return it: since 2026-07 Binance's answers carry no avgPrice
// and no cumQuote (binance-connector-python 14.0.0 changelog), so a client
// must read fill prices elsewhere (Query Order, Account Trade List).
func answer(o paper.Order) wireOrder {
	w := toWireOrder(o)
	w.AvgPrice, w.CumQuote = "", ""
	return w
}

// ack is the default (ACK) answer: the order as accepted, before matching.
func ack(o paper.Order) wireOrder {
	w := answer(o)
	w.Status, w.ExecutedQty, w.CumQty = "NEW", "0", "0"
	return w
}

// algo is a conditional order of the algo service, resting in the paper
// engine as a stop or take-profit order.
type algo struct {
	ID          int64
	ClientID    string
	Key         string
	Symbol      string
	Side        string
	Type        string
	Qty         decimal.Decimal
	Trigger     decimal.Decimal
	ReduceOnly  bool
	WorkingType string
	PaperID     string
	Created     int64
	Status      string // NEW, CANCELED, FINISHED, REJECTED
}

type wireAlgo struct {
	AlgoID                  int64  `json:"algoId"`
	ClientAlgoID            string `json:"clientAlgoId"`
	AlgoType                string `json:"algoType"`
	OrderType               string `json:"orderType"`
	Symbol                  string `json:"symbol"`
	Side                    string `json:"side"`
	PositionSide            string `json:"positionSide"`
	TimeInForce             string `json:"timeInForce"`
	Quantity                string `json:"quantity"`
	AlgoStatus              string `json:"algoStatus"`
	TriggerPrice            string `json:"triggerPrice"`
	Price                   string `json:"price"`
	WorkingType             string `json:"workingType"`
	PriceMatch              string `json:"priceMatch"`
	SelfTradePreventionMode string `json:"selfTradePreventionMode"`
	PriceProtect            bool   `json:"priceProtect"`
	ReduceOnly              bool   `json:"reduceOnly"`
	ClosePosition           bool   `json:"closePosition"`
	CreateTime              int64  `json:"createTime"`
	UpdateTime              int64  `json:"updateTime"`
	TriggerTime             int64  `json:"triggerTime"`
	GoodTillDate            int64  `json:"goodTillDate"`
}

func (a *algo) wire() wireAlgo {
	return wireAlgo{
		AlgoID: a.ID, ClientAlgoID: a.ClientID, AlgoType: "CONDITIONAL", OrderType: a.Type, Symbol: a.Symbol,
		Side: a.Side, PositionSide: "BOTH", TimeInForce: "GTC", Quantity: a.Qty.String(), AlgoStatus: a.Status,
		TriggerPrice: a.Trigger.String(), Price: "0", WorkingType: a.WorkingType, PriceMatch: "NONE",
		SelfTradePreventionMode: "EXPIRE_MAKER", ReduceOnly: a.ReduceOnly, CreateTime: a.Created, UpdateTime: a.Created,
	}
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
