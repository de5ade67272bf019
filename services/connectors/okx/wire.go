package okx

import (
	"encoding/json"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
)

// OKX's JSON, as v5 sends it (fact sheet §3-§5): every number is a string,
// an absent value is often "" rather than missing, times are milliseconds.

// dec, ms and text are the shared lenient decoders: a decimal, a
// millisecond time and an id OKX sends as a string ("" read as zero) or a
// number.
type (
	dec  = connector.Decimal
	ms   = connector.Int
	text = connector.Text
)

// flag is a boolean OKX sends as "true"/"false" or as a JSON bool.
type flag bool

func (f *flag) UnmarshalJSON(b []byte) error {
	*f = flag(strings.Trim(string(b), `"`) == "true")
	return nil
}

type instrument struct {
	InstID     string `json:"instId"`
	InstType   string `json:"instType"`
	Uly        string `json:"uly"`
	InstFamily string `json:"instFamily"`
	SettleCcy  string `json:"settleCcy"`
	CtVal      dec    `json:"ctVal"`
	CtValCcy   string `json:"ctValCcy"`
	CtType     string `json:"ctType"`
	TickSz     dec    `json:"tickSz"`
	LotSz      dec    `json:"lotSz"`
	MinSz      dec    `json:"minSz"`
	MaxMktSz   dec    `json:"maxMktSz"`
	Lever      string `json:"lever"`
	State      string `json:"state"`
	GroupID    string `json:"groupId"`
}

type book struct {
	Asks [][]string `json:"asks"`
	Bids [][]string `json:"bids"`
	TS   ms         `json:"ts"`
}

type markPrice struct {
	InstID string `json:"instId"`
	MarkPx dec    `json:"markPx"`
	TS     ms     `json:"ts"`
}

type indexTicker struct {
	InstID string `json:"instId"`
	IdxPx  dec    `json:"idxPx"`
}

// candle is one row of /market/candles: [ts, o, h, l, c, vol, volCcy,
// volCcyQuote, confirm].
type candle []string

type fundingRate struct {
	InstID          string `json:"instId"`
	FundingRate     dec    `json:"fundingRate"`
	FundingTime     ms     `json:"fundingTime"`
	NextFundingTime ms     `json:"nextFundingTime"`
}

type openInterest struct {
	InstID string `json:"instId"`
	Oi     dec    `json:"oi"`
	OiCcy  dec    `json:"oiCcy"`
}

type tradeFee struct {
	Maker    dec `json:"maker"`
	Taker    dec `json:"taker"`
	MakerU   dec `json:"makerU"`
	TakerU   dec `json:"takerU"`
	FeeGroup []struct {
		GroupID string `json:"groupId"`
		Maker   dec    `json:"maker"`
		Taker   dec    `json:"taker"`
	} `json:"feeGroup"`
}

type balance struct {
	TotalEq dec `json:"totalEq"`
	AdjEq   dec `json:"adjEq"`
	AvailEq dec `json:"availEq"` // account level, multi-currency and portfolio margin
	Imr     dec `json:"imr"`
	Details []struct {
		Ccy      string `json:"ccy"`
		Eq       dec    `json:"eq"`
		AvailEq  dec    `json:"availEq"`
		AvailBal dec    `json:"availBal"`
	} `json:"details"`
}

type accountConfig struct {
	UID     string `json:"uid"`
	AcctLv  string `json:"acctLv"`
	PosMode string `json:"posMode"`
	Perm    string `json:"perm"`
}

type position struct {
	InstID  string `json:"instId"`
	PosSide string `json:"posSide"`
	Pos     dec    `json:"pos"`
	AvgPx   dec    `json:"avgPx"`
	MarkPx  dec    `json:"markPx"`
	Upl     dec    `json:"upl"`
	Lever   dec    `json:"lever"`
	MgnMode string `json:"mgnMode"`
}

// order is a regular order as order details and the pending list give it.
type order struct {
	InstID       string `json:"instId"`
	OrdID        string `json:"ordId"`
	ClOrdID      string `json:"clOrdId"`
	Side         string `json:"side"`
	OrdType      string `json:"ordType"`
	Sz           dec    `json:"sz"`
	Px           dec    `json:"px"`
	AccFillSz    dec    `json:"accFillSz"`
	AvgPx        dec    `json:"avgPx"`
	Fee          dec    `json:"fee"`
	State        string `json:"state"`
	CancelSource string `json:"cancelSource"`
	ReduceOnly   flag   `json:"reduceOnly"`
	CTime        ms     `json:"cTime"`
}

// algoOrder is an algo order (trigger, conditional, oco) as the pending
// list and algo details give it.
type algoOrder struct {
	AlgoID      string `json:"algoId"`
	AlgoClOrdID string `json:"algoClOrdId"`
	InstID      string `json:"instId"`
	OrdType     string `json:"ordType"`
	Side        string `json:"side"`
	Sz          dec    `json:"sz"`
	State       string `json:"state"`
	TriggerPx   dec    `json:"triggerPx"`
	TpTriggerPx dec    `json:"tpTriggerPx"`
	SlTriggerPx dec    `json:"slTriggerPx"`
	ReduceOnly  flag   `json:"reduceOnly"`
	CTime       ms     `json:"cTime"`
}

type fill struct {
	InstID   string `json:"instId"`
	TradeID  text   `json:"tradeId"`
	OrdID    text   `json:"ordId"`
	BillID   text   `json:"billId"`
	Side     string `json:"side"`
	FillSz   dec    `json:"fillSz"`
	FillPx   dec    `json:"fillPx"`
	Fee      dec    `json:"fee"`
	FeeCcy   string `json:"feeCcy"`
	TS       ms     `json:"ts"`
	FillTime ms     `json:"fillTime"`
	FillPnl  dec    `json:"fillPnl"` // Given false when OKX leaves it out
}

// placed is one slot of a placement answer (order, batch, algo).
type placed struct {
	OrdID       string `json:"ordId"`
	ClOrdID     string `json:"clOrdId"`
	AlgoID      string `json:"algoId"`
	AlgoClOrdID string `json:"algoClOrdId"`
	SCode       code   `json:"sCode"`
	SMsg        string `json:"sMsg"`
}

type leverageAnswer struct {
	Lever   dec    `json:"lever"`
	MgnMode string `json:"mgnMode"`
	InstID  string `json:"instId"`
}

// orderBody is POST /api/v5/trade/order and one item of batch-orders.
type orderBody struct {
	InstID     string `json:"instId"`
	TdMode     string `json:"tdMode"`
	Side       string `json:"side"`
	OrdType    string `json:"ordType"`
	Sz         string `json:"sz"`
	Px         string `json:"px,omitempty"`
	ClOrdID    string `json:"clOrdId,omitempty"`
	ReduceOnly bool   `json:"reduceOnly,omitempty"`
}

// algoBody is POST /api/v5/trade/order-algo. Prices trigger on the mark
// price (the default would be the last price: fact sheet §5).
type algoBody struct {
	InstID          string `json:"instId"`
	TdMode          string `json:"tdMode"`
	Side            string `json:"side"`
	OrdType         string `json:"ordType"`
	Sz              string `json:"sz"`
	TriggerPx       string `json:"triggerPx,omitempty"`
	OrderPx         string `json:"orderPx,omitempty"`
	TriggerPxType   string `json:"triggerPxType,omitempty"`
	TpTriggerPx     string `json:"tpTriggerPx,omitempty"`
	TpOrdPx         string `json:"tpOrdPx,omitempty"`
	TpTriggerPxType string `json:"tpTriggerPxType,omitempty"`
	SlTriggerPx     string `json:"slTriggerPx,omitempty"`
	SlOrdPx         string `json:"slOrdPx,omitempty"`
	SlTriggerPxType string `json:"slTriggerPxType,omitempty"`
	ReduceOnly      bool   `json:"reduceOnly,omitempty"`
	CxlOnClosePos   bool   `json:"cxlOnClosePos,omitempty"`
	AlgoClOrdID     string `json:"algoClOrdId,omitempty"`
}

// cancelItem is one order of cancel-order / cancel-batch-orders.
type cancelItem struct {
	InstID string `json:"instId"`
	OrdID  string `json:"ordId,omitempty"`
}

// cancelAlgoItem is one order of cancel-algos.
type cancelAlgoItem struct {
	AlgoID string `json:"algoId"`
	InstID string `json:"instId"`
}

type leverageBody struct {
	InstID  string `json:"instId"`
	Lever   string `json:"lever"`
	MgnMode string `json:"mgnMode"`
}

var _ json.Unmarshaler = (*dec)(nil)
