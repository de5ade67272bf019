package fapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// ListenKey creates (POST) or extends (PUT) a listen key with call, the
// venue's request to path.
func ListenKey(venue, path, method string, call func(out any) error) (string, error) {
	var res struct {
		ListenKey string `json:"listenKey"`
	}
	if err := call(&res); err != nil {
		return "", err
	}
	if method == http.MethodPost && res.ListenKey == "" {
		return "", contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "%s answered POST %s without a listenKey", venue, path)
	}
	return res.ListenKey, nil
}

// Events reads the user data stream's frames into account events:
// ORDER_TRADE_UPDATE, ACCOUNT_UPDATE and the venue's own (Other); a
// listenKeyExpired frame is an error, as nothing more comes on the key.
type Events struct {
	Venue string
	// Stops: conditional orders are New Order's (Aster), so a waiting one
	// is PENDING and shows its stopPrice as trigger.
	Stops bool
	// AbsFee: the fee's sign is unconfirmed (Aster), its absolute value
	// is taken.
	AbsFee bool
	// FundingOnly: a FUNDING_FEE update is the payment alone (Aster), its
	// balance changes summed on its position's symbol. Otherwise its
	// positions and balances are events too, and it names the market only
	// for an isolated position (the one position it carries): a cross
	// position's funding shows in the balance alone (Binance).
	FundingOnly bool
	// Other reads the "o" of another event type (Binance's ALGO_UPDATE);
	// false when it is not one.
	Other func(event string, o json.RawMessage) (contract.OrderEvent, bool, error)
}

// userFrame is one user data event. Keys differing only in case are all
// declared, as encoding/json matches names case-insensitively.
type userFrame struct {
	Event     string          `json:"e"`
	EventTime connector.Int   `json:"E"`
	TxTime    connector.Int   `json:"T"`
	Order     json.RawMessage `json:"o"`
	Account   json.RawMessage `json:"a"`
}

// orderUpdate is ORDER_TRADE_UPDATE's "o" (Binance's Event-Order-Update;
// Aster fact sheet §12.2).
type orderUpdate struct {
	Symbol      string            `json:"s"`
	Side        string            `json:"S"`
	ClientID    string            `json:"c"`
	Type        string            `json:"o"`
	TimeInForce string            `json:"f"`
	Qty         decimal.Decimal   `json:"q"`
	Price       decimal.Decimal   `json:"p"`
	AvgPrice    decimal.Decimal   `json:"ap"`
	StopPrice   decimal.Decimal   `json:"sp"`
	ExecType    string            `json:"x"`
	Status      string            `json:"X"`
	OrderID     connector.Int     `json:"i"`
	LastQty     decimal.Decimal   `json:"l"`
	LastPrice   decimal.Decimal   `json:"L"`
	Filled      decimal.Decimal   `json:"z"`
	FeeAsset    string            `json:"N"`
	Fee         decimal.Decimal   `json:"n"`
	TradeTime   int64             `json:"T"`
	TradeID     connector.Int     `json:"t"`
	Maker       bool              `json:"m"`
	ReduceOnly  bool              `json:"R"`
	Realized    connector.Decimal `json:"rp"`
}

// accountUpdate is ACCOUNT_UPDATE's "a": m the reason, B balances, P
// positions.
type accountUpdate struct {
	Reason   string `json:"m"`
	Balances []struct {
		Asset  string            `json:"a"`
		Wallet connector.Decimal `json:"wb"`
		Change decimal.Decimal   `json:"bc"`
	} `json:"B"`
	Positions []struct {
		Symbol       string            `json:"s"`
		Amount       decimal.Decimal   `json:"pa"`
		Entry        decimal.Decimal   `json:"ep"`
		Unrealized   connector.Decimal `json:"up"`
		PositionSide string            `json:"ps"`
	} `json:"P"`
}

// Emit is the UserStream Frame emitting each frame's events.
func (e Events) Emit(emit func(connector.AccountEvent)) func([]byte) error {
	return func(data []byte) error {
		evs, err := e.Read(data)
		for _, ev := range evs {
			emit(ev)
		}
		return err
	}
}

// Read turns one user data frame into account events.
func (e Events) Read(data []byte) ([]connector.AccountEvent, error) {
	venue := strings.ToLower(e.Venue)
	var f userFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s user data frame: %w", venue, err)
	}
	at := time.UnixMilli(int64(f.EventTime))
	var out []connector.AccountEvent
	add := func(data ...any) {
		for _, d := range data {
			out = append(out, connector.AccountEvent{Time: at, Data: d})
		}
	}
	switch f.Event {
	case "listenKeyExpired":
		return nil, fmt.Errorf("%s listen key expired; a new one is needed", venue)
	case "ORDER_TRADE_UPDATE":
		var u orderUpdate
		if err := json.Unmarshal(f.Order, &u); err != nil {
			return nil, fmt.Errorf("%s ORDER_TRADE_UPDATE: %w", venue, err)
		}
		add(e.order(u))
		if u.ExecType == "TRADE" && u.LastQty.IsPositive() {
			add(e.fill(u))
		}
	case "ACCOUNT_UPDATE":
		var u accountUpdate
		if err := json.Unmarshal(f.Account, &u); err != nil {
			return nil, fmt.Errorf("%s ACCOUNT_UPDATE: %w", venue, err)
		}
		add(e.account(u)...)
	default:
		if e.Other != nil {
			ev, ok, err := e.Other(f.Event, f.Order)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", venue, f.Event, err)
			}
			if ok {
				add(ev)
			}
		}
	}
	return out, nil // MARGIN_CALL, ACCOUNT_CONFIG_UPDATE, announcements: nothing
}

func (e Events) order(u orderUpdate) contract.OrderEvent {
	o := contract.OrderEvent{OrderID: strconv.FormatInt(int64(u.OrderID), 10), ClientOrderID: u.ClientID, Market: u.Symbol,
		Side: contract.Side(u.Side), Type: u.Type, Size: u.Qty, FilledSize: u.Filled, ReduceOnly: u.ReduceOnly,
		Status: Status(u.Status, u.Filled.IsPositive())}
	if e.Stops {
		o.Status, o.TriggerPrice = OrderStatus(Order{Status: u.Status, Type: u.Type, ExecutedQty: u.Filled}), Positive(u.StopPrice)
	}
	o.Price = Positive(u.Price)
	if u.Filled.IsPositive() {
		o.AvgPrice = Positive(u.AvgPrice)
	}
	if u.Status == "EXPIRED" || u.Status == "EXPIRED_IN_MATCH" {
		o.Reason = "expired"
		if u.TimeInForce == "GTX" && !u.Filled.IsPositive() {
			o.Reason = "post_only_would_take"
		}
	}
	return o
}

func (e Events) fill(u orderUpdate) contract.FillEvent {
	f := contract.FillEvent{FillID: strconv.FormatInt(int64(u.TradeID), 10), OrderID: strconv.FormatInt(int64(u.OrderID), 10),
		ClientOrderID: u.ClientID, Market: u.Symbol, Side: contract.Side(u.Side), Size: u.LastQty, Price: u.LastPrice,
		Fee: u.Fee, FeeAsset: u.FeeAsset, Liquidity: "TAKER", Timestamp: u.TradeTime / 1000}
	if e.AbsFee {
		f.Fee = u.Fee.Abs()
	}
	if u.Maker {
		f.Liquidity = "MAKER"
	}
	if u.Realized.Given {
		f.RealizedPnl = new(u.Realized.D())
	}
	return f
}

// account is the balance, position and funding events of an
// ACCOUNT_UPDATE.
func (e Events) account(u accountUpdate) []any {
	var out []any
	if u.Reason == "FUNDING_FEE" && e.FundingOnly {
		if len(u.Positions) > 0 {
			amount := decimal.Zero
			for _, b := range u.Balances {
				amount = amount.Add(b.Change)
			}
			out = append(out, contract.FundingEvent{Market: u.Positions[0].Symbol, Amount: amount})
		}
		return out
	}
	for _, p := range u.Positions {
		ev := contract.PositionEvent{Market: p.Symbol, Side: Position(PositionRisk{PositionSide: p.PositionSide, PositionAmt: p.Amount}, decimal.Zero).Side,
			Size: p.Amount.Abs(), EntryPrice: p.Entry}
		if p.Amount.IsZero() {
			ev.Side = contract.PositionFlat
		}
		if p.Unrealized.Given {
			ev.UnrealizedPnl = new(p.Unrealized.D())
		}
		out = append(out, ev)
	}
	for _, b := range u.Balances {
		if b.Wallet.Given {
			out = append(out, contract.BalanceEvent{Asset: b.Asset, WalletBalance: new(b.Wallet.D())})
		}
		if u.Reason == "FUNDING_FEE" && len(u.Positions) == 1 && !b.Change.IsZero() {
			out = append(out, contract.FundingEvent{Market: u.Positions[0].Symbol, Amount: b.Change})
		}
	}
	return out
}

// Positive is d when positive, else nil (a figure the venue sends as 0).
func Positive(d decimal.Decimal) *decimal.Decimal {
	if !d.IsPositive() {
		return nil
	}
	return &d
}
