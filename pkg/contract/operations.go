package contract

import (
	"reflect"
	"sort"
	"strings"
)

// Group is an operation family (SPEC §4); it also names the micro group of
// the connector endpoints.
type Group string

// Operation groups.
const (
	GroupMarket    Group = "market"
	GroupAccount   Group = "account"
	GroupPlacement Group = "placement"
	GroupManage    Group = "management"
)

// Operation is one row of the operation table.
type Operation struct {
	Name     string // camelCase, as in the `operation` field
	Tool     string // snake_case MCP tool name
	Group    Group
	MinTier  Tier
	ReadOnly bool // no side effects upstream
	// Extension marks an operation beyond SPEC's 20 (DESIGN §13).
	Extension bool
	// ByExchange: credentialId may be replaced by `exchange` (no credential).
	ByExchange bool
	// AtEdge marks an operation the edge serves itself from the account
	// event stream; connectors have no endpoint for it.
	AtEdge bool
	// Keyless marks an operation about the API key itself: it takes no
	// credentialId (getCredentials).
	Keyless bool
	Summary string // one paragraph for humans and agents
	Params  reflect.Type
	Result  reflect.Type
}

// Places reports whether the operation creates orders (idempotency and
// timeout messages apply).
func (o *Operation) Places() bool { return o.Group == GroupPlacement }

// NewParams returns a pointer to a zero parameter struct.
func (o *Operation) NewParams() any { return reflect.New(o.Params).Interface() }

func op[P, R any](name, tool string, g Group, summary string) *Operation {
	tier, ro := TierFree, true
	if g == GroupPlacement || g == GroupManage {
		tier, ro = TierBuilder, false
	}
	return &Operation{
		Name: name, Tool: tool, Group: g, MinTier: tier, ReadOnly: ro, Summary: summary,
		Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
	}
}

// Operation names.
const (
	OpGetOrderbook          = "getOrderbook"
	OpGetMarkPrice          = "getMarkPrice"
	OpGetCandles            = "getCandles"
	OpGetFundingRate        = "getFundingRate"
	OpGetMarketsWithFunding = "getMarketsWithFunding"
	OpGetFeeInfo            = "getFeeInfo"
	OpGetBalance            = "getBalance"
	OpGetPositions          = "getPositions"
	OpGetOrders             = "getOrders"
	OpGetFills              = "getFills"
	OpTestCredentials       = "testCredentials"
	OpPlaceLimitOrder       = "placeLimitOrder"
	OpPlaceMarketOrder      = "placeMarketOrder"
	OpPlaceStopOrder        = "placeStopOrder"
	OpPlaceBatchOrder       = "placeBatchOrder"
	OpPlaceProtectionOrders = "placeProtectionOrders"
	OpCancelOrder           = "cancelOrder"
	OpCancelAllOrders       = "cancelAllOrders"
	OpCloseAllPositions     = "closeAllPositions"
	OpSetLeverage           = "setLeverage"
	OpWaitForOrder          = "waitForOrder"
	OpGetEvents             = "getEvents"
	OpModifyOrder           = "modifyOrder"
	OpSetDeadManSwitch      = "setDeadManSwitch"
	OpGetCredentials        = "getCredentials"
)

// Operations is the table: the 20 operations in SPEC §4 order, then the
// extension operations.
var Operations = append(specOperations, extensionOperations...)

var specOperations = []*Operation{
	op[OrderbookParams, OrderbookResult](OpGetOrderbook, "get_orderbook", GroupMarket,
		"Read the order book of a market: bids and asks as [price, size] pairs of decimal strings, best first, prices in quote currency and sizes in base-asset units; depth is levels per side. Read-only."),
	op[MarketParams, MarkPriceResult](OpGetMarkPrice, "get_mark_price", GroupMarket,
		"Read the mark price (used for PnL, liquidation and stop triggers) and the index price of a market, in quote currency. Read-only."),
	op[CandlesParams, CandlesResult](OpGetCandles, "get_candles", GroupMarket,
		"Read OHLCV candles of a market; interval is in minutes (1, 5, 15, 60, 240, 1440), times are Unix seconds, volume is in base-asset units. Read-only."),
	op[MarketParams, FundingRateResult](OpGetFundingRate, "get_funding_rate", GroupMarket,
		"Read the current funding rate of a perpetual market (a fraction per funding interval, 0.0001 means 0.01%) and the next funding time in Unix seconds. Read-only."),
	op[NoParams, MarketsResult](OpGetMarketsWithFunding, "get_markets_with_funding", GroupMarket,
		"List every perpetual market of the credential's exchange with mark price (quote currency), funding rate (a fraction per funding interval) and open interest (base-asset units). Read-only."),
	op[MarketParams, FeeInfoResult](OpGetFeeInfo, "get_fee_info", GroupMarket,
		"Read the maker and taker fee of a market for this account, in basis points (1 bps = 0.01%). Read-only."),
	op[NoParams, BalanceResult](OpGetBalance, "get_balance", GroupAccount,
		"Read the account's equity, free collateral and account value in quote currency. Read-only."),
	op[MarketFilterParams, PositionsResult](OpGetPositions, "get_positions", GroupAccount,
		"List open positions (side, size in base asset, entry and mark price, unrealized PnL, leverage), optionally for one market. Read-only."),
	op[MarketFilterParams, OrdersResult](OpGetOrders, "get_orders", GroupAccount,
		"List open limit orders and pending stop orders (id, side, size and filled size in base-asset units, price in quote currency, status), optionally for one market. Read-only."),
	op[FillsParams, FillsResult](OpGetFills, "get_fills", GroupAccount,
		"List the account's recent fills on a market, newest first, with price and fee in quote currency, size in base-asset units and a Unix-seconds timestamp. Read-only."),
	op[NoParams, TestCredentialsResult](OpTestCredentials, "test_credentials", GroupAccount,
		"Check that the stored exchange credential is accepted by the exchange; valid:false means the exchange rejected it. Read-only."),
	op[LimitOrderParams, LimitOrderResult](OpPlaceLimitOrder, "place_limit_order", GroupPlacement,
		"Place a limit order; size is in base-asset units and price in quote currency. Prices round toward the safe side of the tick, sizes down to the lot step. With takeProfit and/or stopLoss ({triggerPrice}, above and below the limit price for a BUY, the other way for a SELL) one reduce-only pair protects what fills, resized as the order fills; cancelling it unfilled leaves no pair. On mainnet credentials this moves real money. Pass clientOrderId to make retries safe."),
	op[MarketOrderParams, MarketOrderResult](OpPlaceMarketOrder, "place_market_order", GroupPlacement,
		"Place a market order that executes immediately against the book; size is in base-asset units. Returns the average fill price, filled size and fee. With takeProfit and/or stopLoss ({triggerPrice} in quote currency, on the protecting side of the mark) the reduce-only pair is placed before the answer, which names it under protection. On mainnet credentials this moves real money."),
	op[StopOrderParams, StopOrderResult](OpPlaceStopOrder, "place_stop_order", GroupPlacement,
		"Place a stop-market order that waits (PENDING) until the mark price reaches triggerPrice (quote currency), then executes at market; size is in base-asset units and reduceOnly defaults to true. On mainnet credentials this moves real money."),
	op[BatchOrderParams, BatchResult](OpPlaceBatchOrder, "place_batch_order", GroupPlacement,
		"Place up to 10 limit orders in one call, sizes in base-asset units and prices in quote currency; results come back in request order, each with its own status (a rejected order does not cancel the others). On mainnet credentials this moves real money."),
	op[ProtectionParams, ProtectionResult](OpPlaceProtectionOrders, "place_protection_orders", GroupPlacement,
		"Place take-profit and/or stop-loss orders for an open position of size (base-asset units) entered at entryPrice (quote currency): tpPercent and slPercent are percent distances from entryPrice (5 means 5%); both legs are reduce-only and trigger on mark price. On mainnet credentials this moves real money."),
	op[CancelOrderParams, CancelOrderResult](OpCancelOrder, "cancel_order", GroupManage,
		"Cancel one open or pending order by its exchange order id (from the placement result or get_orders); pass market too, as some exchanges need it. Destructive: the order cannot be restored, and on mainnet credentials it is real money at stake."),
	op[MarketParams, CancelAllResult](OpCancelAllOrders, "cancel_all_orders", GroupManage,
		"Cancel every open and pending order on a market, stop orders protecting a position included, and report how many were cancelled. Destructive: on mainnet credentials these orders are real money, and a position may be left without its stop-loss."),
	op[MarketParams, CloseAllResult](OpCloseAllPositions, "close_all_positions", GroupManage,
		"Close the open position on a market with reduce-only market orders; returns the closed size in base-asset units and the average close price in quote currency. Destructive: on mainnet credentials this moves real money and realizes the profit or loss."),
	op[LeverageParams, LeverageResult](OpSetLeverage, "set_leverage", GroupManage,
		"Set the cross-margin leverage multiplier of a market for this account (5 means 5x). Higher leverage raises liquidation risk: on mainnet credentials that is real money."),
}

var byName = func() map[string]*Operation {
	m := make(map[string]*Operation, len(Operations))
	for _, o := range Operations {
		m[o.Name] = o
	}
	return m
}()

var byTool = func() map[string]*Operation {
	m := make(map[string]*Operation, len(Operations))
	for _, o := range Operations {
		m[o.Tool] = o
	}
	return m
}()

// Lookup returns the operation with this camelCase name.
func Lookup(name string) (*Operation, bool) { o, ok := byName[name]; return o, ok }

// LookupTool returns the operation with this snake_case MCP tool name.
func LookupTool(tool string) (*Operation, bool) { o, ok := byTool[tool]; return o, ok }

// OperationNames returns the camelCase names, sorted.
func OperationNames() []string {
	out := make([]string, 0, len(Operations))
	for _, o := range Operations {
		out = append(out, o.Name)
	}
	sort.Strings(out)
	return out
}

// Suggest returns the operation a misspelt name most likely meant: one
// that differs only in case, dashes or underscores (an MCP tool name), or
// within a few edits. ok is false when nothing is close.
func Suggest(name string) (op *Operation, ok bool) {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	n := norm(name)
	best, bestDist := (*Operation)(nil), 4
	for _, o := range Operations {
		if d := editDistance(n, norm(o.Name)); d < bestDist {
			best, bestDist = o, d
		}
	}
	return best, best != nil && bestDist <= max(1, len(n)/5)
}

// editDistance is the Levenshtein distance of a and b in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
