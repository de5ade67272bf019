package stark

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/shopspring/decimal"
)

// OrderRequest is the body of POST /v1/orders (OpenAPI requests.OrderRequest).
type OrderRequest struct {
	Market             string   `json:"market"`
	Side               string   `json:"side"`
	Type               string   `json:"type"`
	Instruction        string   `json:"instruction"`
	Price              string   `json:"price,omitempty"`
	TriggerPrice       string   `json:"trigger_price,omitempty"`
	ClientID           string   `json:"client_id,omitempty"`
	Size               string   `json:"size"`
	Flags              []string `json:"flags,omitempty"`
	Signature          string   `json:"signature"`
	SignatureTimestamp int64    `json:"signature_timestamp"`
	RecvWindow         int64    `json:"recv_window,omitempty"`
}

// scale8 is v × 10^8 as an exact integer; Paradex quantums are 1e-8.
func scale8(v string) (*big.Int, error) {
	d, err := decimal.NewFromString(v)
	if err != nil {
		return nil, fmt.Errorf("%q is not a decimal number", v)
	}
	s := d.Shift(8)
	if !s.Equal(s.Truncate(0)) {
		return nil, fmt.Errorf("%s has more than 8 decimals", v)
	}
	if s.Sign() < 0 {
		return nil, fmt.Errorf("%s is negative", v)
	}
	return s.BigInt(), nil
}

// SignedMessage extracts the part of an order body that is signed: side
// 1/2, size and price × 10^8, price 0 for every type containing MARKET.
func (o *OrderRequest) SignedMessage() (OrderMessage, error) {
	var m OrderMessage
	switch o.Side {
	case "BUY":
		m.Side = 1
	case "SELL":
		m.Side = 2
	default:
		return m, errors.New("side must be BUY or SELL")
	}
	size, err := scale8(o.Size)
	if err != nil {
		return m, fmt.Errorf("size: %v", err)
	}
	price := new(big.Int)
	if !strings.Contains(o.Type, "MARKET") {
		if price, err = scale8(o.Price); err != nil {
			return m, fmt.Errorf("price: %v", err)
		}
	}
	m.TimestampMs = o.SignatureTimestamp
	m.Market = o.Market
	m.OrderType = o.Type
	m.Size = size
	m.Price = price
	return m, nil
}

// Sign fills signature and signature_timestamp (ms).
func (o *OrderRequest) Sign(key *Key, chainID string, account *big.Int, nowMs int64) error {
	o.SignatureTimestamp = nowMs
	m, err := o.SignedMessage()
	if err != nil {
		return err
	}
	r, s, err := key.Sign(OrderHash(chainID, account, m))
	if err != nil {
		return err
	}
	o.Signature = FormatSignature(r, s)
	return nil
}
