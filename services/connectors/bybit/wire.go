package bybit

import (
	"github.com/perpgate/perpgate/pkg/connector"
)

// Wire shapes of Bybit v5 answers (the `result` of each envelope), with
// the doc page each comes from. Only the fields the adapter reads.

// dec is a decimal Bybit sends as a string (sometimes "", read as zero:
// avgPrice of an unfilled order, leverage under portfolio margin) or a
// number: the shared lenient decoder.
type dec = connector.Decimal

// instrumentsPage is GET /v5/market/instruments-info (market/instrument).
type instrumentsPage struct {
	List           []instrument `json:"list"`
	NextPageCursor string       `json:"nextPageCursor"`
}

type instrument struct {
	Symbol       string `json:"symbol"`
	ContractType string `json:"contractType"`
	Status       string `json:"status"`
	BaseCoin     string `json:"baseCoin"`
	QuoteCoin    string `json:"quoteCoin"`
	SettleCoin   string `json:"settleCoin"`
	PriceFilter  struct {
		TickSize dec `json:"tickSize"`
	} `json:"priceFilter"`
	LotSizeFilter struct {
		QtyStep          dec `json:"qtyStep"`
		MinOrderQty      dec `json:"minOrderQty"`
		MaxOrderQty      dec `json:"maxOrderQty"`
		MaxMktOrderQty   dec `json:"maxMktOrderQty"`
		MinNotionalValue dec `json:"minNotionalValue"`
	} `json:"lotSizeFilter"`
	LeverageFilter struct {
		MaxLeverage dec `json:"maxLeverage"`
	} `json:"leverageFilter"`
	FundingInterval int `json:"fundingInterval"` // minutes
}

// book is GET /v5/market/orderbook (market/orderbook): b bids from the
// best down, a asks from the best up, each [price, size].
type book struct {
	Bids [][2]dec `json:"b"`
	Asks [][2]dec `json:"a"`
}

// tickers is GET /v5/market/tickers (market/tickers), category linear.
type tickers struct {
	List []ticker `json:"list"`
}

type ticker struct {
	Symbol          string        `json:"symbol"`
	MarkPrice       dec           `json:"markPrice"`
	IndexPrice      dec           `json:"indexPrice"`
	FundingRate     dec           `json:"fundingRate"`
	NextFundingTime connector.Int `json:"nextFundingTime"` // ms
	OpenInterest    dec           `json:"openInterest"`
	// FundingIntervalHour is the hours the rate covers (market/tickers).
	FundingIntervalHour string `json:"fundingIntervalHour"`
}

// klines is GET /v5/market/kline (market/kline): rows newest first, each
// [startTime ms, open, high, low, close, volume, turnover], all strings.
type klines struct {
	List [][]string `json:"list"`
}

// feeRates is GET /v5/account/fee-rate (account/fee-rate).
type feeRates struct {
	List []struct {
		Symbol       string `json:"symbol"`
		TakerFeeRate dec    `json:"takerFeeRate"`
		MakerFeeRate dec    `json:"makerFeeRate"`
	} `json:"list"`
}

// wallet is GET /v5/account/wallet-balance (account/wallet-balance).
type wallet struct {
	List []struct {
		AccountType           string `json:"accountType"`
		TotalEquity           dec    `json:"totalEquity"`
		TotalWalletBalance    dec    `json:"totalWalletBalance"`
		TotalMarginBalance    dec    `json:"totalMarginBalance"`
		TotalAvailableBalance dec    `json:"totalAvailableBalance"`
	} `json:"list"`
}

// positions is GET /v5/position/list (position).
type positions struct {
	List           []position `json:"list"`
	NextPageCursor string     `json:"nextPageCursor"`
}

type position struct {
	PositionIdx   int    `json:"positionIdx"`
	Symbol        string `json:"symbol"`
	Side          string `json:"side"` // Buy, Sell, "" when flat
	Size          dec    `json:"size"`
	AvgPrice      dec    `json:"avgPrice"`
	MarkPrice     dec    `json:"markPrice"`
	UnrealisedPnl dec    `json:"unrealisedPnl"`
	Leverage      dec    `json:"leverage"`
}

// orders is GET /v5/order/realtime (order/open-order).
type orders struct {
	List           []order `json:"list"`
	NextPageCursor string  `json:"nextPageCursor"`
}

type order struct {
	OrderID       string         `json:"orderId"`
	OrderLinkID   string         `json:"orderLinkId"`
	Symbol        string         `json:"symbol"`
	Price         dec            `json:"price"`
	Qty           dec            `json:"qty"`
	Side          string         `json:"side"`
	OrderStatus   string         `json:"orderStatus"`
	RejectReason  string         `json:"rejectReason"`
	AvgPrice      dec            `json:"avgPrice"`
	CumExecQty    dec            `json:"cumExecQty"`
	CumExecValue  dec            `json:"cumExecValue"`
	CumFeeDetail  map[string]dec `json:"cumFeeDetail"`
	TimeInForce   string         `json:"timeInForce"`
	OrderType     string         `json:"orderType"`
	StopOrderType string         `json:"stopOrderType"`
	TriggerPrice  dec            `json:"triggerPrice"`
	ReduceOnly    bool           `json:"reduceOnly"`
	CreatedTime   connector.Int  `json:"createdTime"` // ms
}

// executions is GET /v5/execution/list (order/execution).
type executions struct {
	List           []execution `json:"list"`
	NextPageCursor string      `json:"nextPageCursor"`
}

type execution struct {
	Symbol      string        `json:"symbol"`
	OrderID     string        `json:"orderId"`
	OrderLinkID string        `json:"orderLinkId"`
	Side        string        `json:"side"`
	ExecID      string        `json:"execId"`
	ExecPrice   dec           `json:"execPrice"`
	ExecQty     dec           `json:"execQty"`
	ExecFee     dec           `json:"execFee"`
	ExecType    string        `json:"execType"`
	ExecTime    connector.Int `json:"execTime"` // ms
}

// orderAck is POST /v5/order/create and /v5/order/cancel (order/create-order,
// order/cancel-order): ids only, processing is asynchronous.
type orderAck struct {
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
}

// batchAck is POST /v5/order/create-batch (order/batch-place): result.list
// and retExtInfo.list are aligned by index.
type batchAck struct {
	List []orderAck `json:"list"`
}

type batchInfo struct {
	List []struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"list"`
}

// cancelled is POST /v5/order/cancel-all (order/cancel-all).
type cancelled struct {
	List []orderAck `json:"list"`
}

// accountInfo is GET /v5/account/info (account/account-info).
type accountInfo struct {
	MarginMode          string `json:"marginMode"`
	UnifiedMarginStatus int    `json:"unifiedMarginStatus"`
}

// Request bodies. Field names and JSON types are Bybit's: decimals as
// strings, reduceOnly a boolean, triggerDirection and positionIdx numbers.

type orderBody struct {
	Category         string `json:"category,omitempty"`
	Symbol           string `json:"symbol"`
	Side             string `json:"side"`
	OrderType        string `json:"orderType"`
	Qty              string `json:"qty"`
	Price            string `json:"price,omitempty"`
	TimeInForce      string `json:"timeInForce,omitempty"`
	OrderLinkID      string `json:"orderLinkId,omitempty"`
	TriggerPrice     string `json:"triggerPrice,omitempty"`
	TriggerDirection int    `json:"triggerDirection,omitempty"`
	TriggerBy        string `json:"triggerBy,omitempty"`
	ReduceOnly       bool   `json:"reduceOnly,omitempty"`
	CloseOnTrigger   bool   `json:"closeOnTrigger,omitempty"`
}

type batchBody struct {
	Category string      `json:"category"`
	Request  []orderBody `json:"request"`
}

type cancelBody struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	OrderID     string `json:"orderId,omitempty"`
	OrderLinkID string `json:"orderLinkId,omitempty"`
}

type symbolBody struct {
	Category string `json:"category"`
	Symbol   string `json:"symbol"`
}

type leverageBody struct {
	Category     string `json:"category"`
	Symbol       string `json:"symbol"`
	BuyLeverage  string `json:"buyLeverage"`
	SellLeverage string `json:"sellLeverage"`
}
