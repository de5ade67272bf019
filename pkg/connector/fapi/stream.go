package fapi

import (
	"encoding/json"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// combined is a combined-stream frame {"stream":..., "data":...}; other
// frames (subscription answers {"result":null,"id":1}) only show the
// socket is alive.
type combined struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
}

// streamPayload holds the fields of markPriceUpdate and depthUpdate. Keys
// differing only in case are all declared: encoding/json would otherwise
// match "E" to the field of "e".
type streamPayload struct {
	Event     string               `json:"e"`
	EventTime int64                `json:"E"`
	TxTime    int64                `json:"T"` // depth: transaction time; mark: next funding time
	Symbol    string               `json:"s"`
	Mark      decimal.NullDecimal  `json:"p"`
	Settle    decimal.NullDecimal  `json:"P"`
	Index     decimal.NullDecimal  `json:"i"`
	Rate      decimal.NullDecimal  `json:"r"`
	First     int64                `json:"U"`
	Final     int64                `json:"u"`
	Prev      int64                `json:"pu"`
	Bids      [][2]decimal.Decimal `json:"b"`
	Asks      [][2]decimal.Decimal `json:"a"`
}

// StreamEvent reads one frame of the combined market streams
// (<symbol>@markPrice@1s, <symbol>@depth@100ms).
func StreamEvent(data []byte) (connector.StreamEvent, error) {
	var c combined
	if err := json.Unmarshal(data, &c); err != nil {
		return connector.StreamEvent{}, err
	}
	if c.Stream == "" {
		return connector.StreamEvent{}, nil
	}
	var p streamPayload
	if err := json.Unmarshal(c.Data, &p); err != nil {
		return connector.StreamEvent{}, err
	}
	switch p.Event {
	case "markPriceUpdate":
		return connector.StreamEvent{Market: p.Symbol,
			Mark:    &connector.MarkUpdate{MarkPrice: p.Mark, IndexPrice: p.Index},
			Funding: &connector.FundingUpdate{Rate: p.Rate, NextFundingTime: p.TxTime / 1000}}, nil
	case "depthUpdate":
		return connector.StreamEvent{Market: p.Symbol, Book: &connector.BookUpdate{First: p.First, Seq: p.Final, Prev: p.Prev,
			Bids: Levels(p.Bids, len(p.Bids)), Asks: Levels(p.Asks, len(p.Asks))}}, nil
	}
	return connector.StreamEvent{}, nil
}
