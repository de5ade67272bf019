package sim

import (
	"github.com/shopspring/decimal"
)

// Binance's JSON shapes as the simulator writes them.

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
