package contract

import (
	"slices"

	"github.com/shopspring/decimal"
)

// Extension operations (DESIGN §13): beyond SPEC's 20, served by the same
// endpoint, marked `Extension` in the table, `x-perpgate-extension: true` in
// OpenAPI. Reads are open to every tier, writes to Builder and up.

// Extension operation names.
const (
	OpGetCapabilities    = "getCapabilities"
	OpGetFundingPayments = "getFundingPayments"
)

// NoCredential is the credential id of a connector request that names an
// exchange instead of a credential (an operation with ByExchange): the
// connector answers it from the venue's adapter alone.
const NoCredential = "-"

// ext is the row of an extension operation; byExchange marks one that
// takes `exchange` instead of credentialId.
func ext[P, R any](name, tool string, g Group, byExchange bool, summary string) *Operation {
	o := op[P, R](name, tool, g, summary)
	o.Extension, o.ByExchange = true, byExchange
	return o
}

// eventOp is an extension operation the edge answers from the account
// event stream.
func eventOp[P, R any](name, tool, summary string) *Operation {
	o := op[P, R](name, tool, GroupAccount, summary)
	o.Extension, o.AtEdge = true, true
	return o
}

// keyOp is an extension operation about the API key itself, answered by
// the edge without a credential.
func keyOp[P, R any](name, tool, summary string) *Operation {
	o := op[P, R](name, tool, GroupAccount, summary)
	o.Extension, o.AtEdge, o.Keyless = true, true, true
	return o
}

// extensionOperations are appended to Operations, after SPEC's 20.
var extensionOperations = []*Operation{
	ext[CapabilitiesParams, CapabilitiesResult](OpGetCapabilities, "get_capabilities", GroupMarket, true,
		"Describe what an exchange does: per operation native (the venue does it), emulated (the gateway builds it from other calls) or unsupported, and the venue facts a program needs (batch size, trigger price type, funding interval, amendable fields, fills history, whether an entry's takeProfit/stopLoss is attached by the venue (attachedProtection native) or placed and resized by the gateway (emulated)). Pass credentialId, or exchange alone (no credential needed). Read-only."),
	ext[FundingPaymentsParams, FundingPaymentsResult](OpGetFundingPayments, "get_funding_payments", GroupAccount, false,
		"List the account's funding payments, newest first: amount in quote currency (negative when the account paid), the rate and position size when the venue says, and a Unix-seconds time; optionally for one market and since a time. Read-only."),
	eventOp[WaitForOrderParams, WaitForOrderResult](OpWaitForOrder, "wait_for_order",
		"Wait until an order (by orderId or clientOrderId) is filled (until=filled), is final: filled, cancelled or rejected (until=done), or changes at all (until=change), for at most timeoutSeconds (1-60); returns the order as last known and reached=true when the condition was met, reached=false on timeout. Use it instead of polling get_orders. Read-only."),
	eventOp[GetEventsParams, GetEventsResult](OpGetEvents, "get_events",
		"Read the credential's account events (order, fill, position, balance, funding) after the event id `after`, oldest first, at most limit (1-500); pass the returned `next` as `after` to read on. A first event of type reset means `after` is older than the retention: take a snapshot with get_orders and get_positions. Read-only."),
	ext[ModifyOrderParams, Order](OpModifyOrder, "modify_order", GroupManage, false,
		"Change the price, size (new total, base-asset units) or trigger price (quote currency) of an open or pending order in place, by orderId or clientOrderId; returns the order after the change. Native amend only: a field the exchange cannot amend is refused, never cancelled and replaced. Guards judge the order after the change. On mainnet credentials this moves real money."),
	ext[DeadManSwitchParams, DeadManSwitchResult](OpSetDeadManSwitch, "set_dead_man_switch", GroupManage, false,
		"Arm a dead man's switch: unless called again within timeoutSeconds (5-3600; 0 turns it off), every open order of the credential, or of market when given, is cancelled. Returns native or emulated (kept by the gateway) and the deadline in Unix seconds. Destructive when it fires: on mainnet credentials these orders are real money, and a position may be left without its stop-loss."),
	keyOp[NoParams, CredentialsResult](OpGetCredentials, "list_credentials",
		"List the exchange credentials this API key may use (its allowedCredentials, allowedExchanges and environment applied): credentialId, exchange, env (mainnet or testnet) and label, never a secret. Takes no credentialId; call it first to find the credentialId every other tool needs. Read-only."),
}

// SpecOperations returns the 20 operations of SPEC §4, without extensions.
func SpecOperations() []*Operation {
	return slices.DeleteFunc(slices.Clone(Operations), func(o *Operation) bool { return o.Extension })
}

// CapabilitiesParams are getCapabilities' parameters (besides credentialId).
type CapabilitiesParams struct {
	Exchange Exchange `json:"exchange,omitempty" op:"enum=hyperliquid|paradex|binance|bybit|okx|aster|paper" desc:"The exchange to describe when no credentialId is given; needs no credential."`
}

// Support says how an exchange serves an operation.
type Support string

// Support levels.
const (
	Native      Support = "native"      // the venue does it
	Emulated    Support = "emulated"    // the gateway builds it from other venue calls
	Unsupported Support = "unsupported" // the venue cannot do it; calls fail
)

// Valid reports whether s is one of the three levels.
func (s Support) Valid() bool { return s == Native || s == Emulated || s == Unsupported }

// Features are the venue facts of getCapabilities (DESIGN §13).
type Features struct {
	MaxBatchSize         int      `json:"maxBatchSize"`
	LinkedProtection     bool     `json:"linkedProtection"`
	TriggerPriceType     string   `json:"triggerPriceType"` // mark, last or index
	MinNotionalPrice     string   `json:"minNotionalPrice"` // limit or mark
	FundingIntervalHours int      `json:"fundingIntervalHours"`
	Amendable            []string `json:"amendable"`
	DeadManSwitch        Support  `json:"deadManSwitch"` // native or emulated
	FillsHistoryDays     int      `json:"fillsHistoryDays"`
	OpenInterest         bool     `json:"openInterest"`
	// AttachedProtection: how takeProfit/stopLoss given with an entry are
	// placed: native (the venue attaches them to the order) or emulated
	// (the gateway places and resizes the pair as the entry fills).
	AttachedProtection Support `json:"attachedProtection"`
}

// CapabilitiesResult is getCapabilities' result.
type CapabilitiesResult struct {
	Exchange   Exchange           `json:"exchange"`
	Operations map[string]Support `json:"operations"`
	Features   Features           `json:"features"`
}

// FundingPaymentsParams are getFundingPayments' parameters.
type FundingPaymentsParams struct {
	Market string `json:"market,omitempty" op:"market" desc:"Only this market; all markets when absent."`
	Since  int    `json:"since,omitempty" op:"min=0" desc:"Only payments at or after this Unix time in seconds."`
	Limit  int    `json:"limit" op:"min=1,max=1000,default=100" desc:"Number of payments, newest first."`
}

// FundingPayment is one funding payment of the account.
type FundingPayment struct {
	Market       string           `json:"market"`
	Amount       decimal.Decimal  `json:"amount"` // quote currency; negative when paid
	Rate         *decimal.Decimal `json:"rate,omitempty"`
	PositionSize *decimal.Decimal `json:"positionSize,omitempty"` // signed, base asset
	Time         int64            `json:"time"`
}

// FundingPaymentsResult is getFundingPayments' result.
type FundingPaymentsResult struct {
	Payments []FundingPayment `json:"payments"`
}

// CredentialEntry is one credential of getCredentials: never a secret.
type CredentialEntry struct {
	CredentialID string      `json:"credentialId"`
	Exchange     Exchange    `json:"exchange"`
	Env          Environment `json:"env"`
	Label        string      `json:"label"`
}

// CredentialsResult is getCredentials' result.
type CredentialsResult struct {
	Credentials []CredentialEntry `json:"credentials"`
}

// MayUse reports whether key k may use credential c: the key's environment
// (live: mainnet, test: testnet), its allowedCredentials and its
// allowedExchanges. The account is the caller's to check.
func (k KeyInfo) MayUse(c CredentialInfo) bool {
	return c.Environment.Matches(k.Env) &&
		(len(k.AllowedCredentials) == 0 || slices.Contains(k.AllowedCredentials, c.ID)) &&
		(len(k.AllowedExchanges) == 0 || slices.Contains(k.AllowedExchanges, c.Exchange))
}
