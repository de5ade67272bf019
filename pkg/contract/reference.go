package contract

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// The API reference (docs/api.md) is generated from the operation table,
// like the JSON Schemas and OpenAPI, so it cannot drift from what the edge
// accepts; a test keeps the checked-in file equal to Reference().

// Example is one documented request: its body fields besides operation and
// credentialId. Values are JSON; "$ORDER_ID" stands for the orderId of the
// placeLimitOrder example before it.
type Example struct {
	Operation string
	Params    string
	Note      string
}

// Examples are the reference's request examples, in an order that runs top
// to bottom on a fresh paper account: a resting order to cancel, a
// position for the reduce-only stop and the protection orders.
var Examples = []Example{
	{OpGetCredentials, ``, "The credentials this key may use; takes no credentialId. Answers `{\"credentials\":[{\"credentialId\":\"...\",\"exchange\":\"paper\",\"env\":\"testnet\",\"label\":\"paper\"}]}`."},
	{OpGetMarkPrice, `"market":"BTC-USD-PERP"`, ""},
	{OpGetOrderbook, `"market":"BTC-USD-PERP","depth":5`, ""},
	{OpGetCandles, `"market":"BTC-USD-PERP","interval":"60","limit":24`, ""},
	{OpGetFundingRate, `"market":"BTC"`, "Any accepted spelling of a market works; responses use the canonical one."},
	{OpGetMarketsWithFunding, ``, ""},
	{OpGetFeeInfo, `"market":"BTC-USD-PERP"`, ""},
	{OpGetBalance, ``, ""},
	{OpTestCredentials, ``, ""},
	{OpPlaceLimitOrder, `"market":"BTC-USD-PERP","side":"BUY","size":"0.01","price":"50000"`, "A buy well below the mark price rests on the book."},
	{OpPlaceLimitOrder, `"market":"BTC-USD-PERP","side":"BUY","size":"0.01","price":"49000","postOnly":true`, "Post-only: it rests on the book, or is refused with POST_ONLY_REJECTED where it would take liquidity. A new clientOrderId each time (or none) places a new order; a repeated one answers the first result."},
	{OpGetOrders, `"market":"BTC-USD-PERP"`, ""},
	{Operation: OpModifyOrder, Params: `"orderId":"$ORDER_ID","market":"BTC-USD-PERP","price":"50500","size":"0.02"`, Note: "Amends the resting order in place (it keeps its orderId); repeating the same change answers the order as it stands and changes nothing."},
	{OpSetDeadManSwitch, `"market":"BTC-USD-PERP","timeoutSeconds":60`, "Unless set again within 60 seconds, the market's open orders are cancelled; call it periodically to keep them."},
	{OpCancelOrder, `"orderId":"$ORDER_ID","market":"BTC-USD-PERP"`, "$ORDER_ID is the orderId a placement answered."},
	{OpSetLeverage, `"market":"BTC-USD-PERP","leverage":5`, ""},
	{OpPlaceMarketOrder, `"market":"BTC-USD-PERP","side":"BUY","size":"0.01"`, "Opens a long position at market."},
	{OpPlaceMarketOrder, `"market":"BTC-USD-PERP","side":"BUY","size":"0.01","takeProfit":{"triggerPrice":"66000"},"stopLoss":{"triggerPrice":"54000"},"dryRun":true`,
		"An entry with its take-profit and stop-loss, as a dry run: the answer shows the order and, under takeProfit and stopLoss, the reduce-only legs it would place once it fills (getCapabilities attachedProtection says whether the venue attaches them or the gateway places and resizes them)."},
	{OpGetPositions, ``, ""},
	{OpPlaceStopOrder, `"market":"BTC-USD-PERP","side":"SELL","size":"0.01","triggerPrice":"40000"`, "Stops are reduce-only unless reduceOnly is false, so this one needs the long position above."},
	{OpPlaceProtectionOrders, `"market":"BTC-USD-PERP","side":"LONG","size":"0.01","entryPrice":"60000","tpPercent":5,"slPercent":3`, "Take-profit 5% above and stop-loss 3% below the entry, both reduce-only."},
	{OpPlaceBatchOrder, `"orders":[{"market":"BTC-USD-PERP","side":"BUY","size":"0.01","price":"48000"},{"market":"ETH-USD-PERP","side":"SELL","size":"0.1","price":"9000"}]`, ""},
	{OpGetFills, `"market":"BTC-USD-PERP","limit":10`, ""},
	{OpCancelAllOrders, `"market":"BTC-USD-PERP"`, "Cancels the stop and protection orders too."},
	{OpCloseAllPositions, `"market":"BTC-USD-PERP"`, ""},
	{Operation: OpGetCapabilities, Note: "What the credential's exchange does natively, emulates or cannot do, and its venue facts."},
	{Operation: OpGetCapabilities, Params: `"exchange":"binance"`,
		Note: "By exchange: no credential needed (the key's allowedExchanges still applies). Answers `{\"exchange\":\"binance\",\"operations\":{\"getFills\":\"native\",\"closeAllPositions\":\"emulated\",...},\"features\":{\"maxBatchSize\":5,\"triggerPriceType\":\"mark\",...}}`."},
	{Operation: OpGetFundingPayments, Params: `"market":"BTC-USD-PERP","limit":10`,
		Note: "Answers `{\"payments\":[{\"market\":\"BTC-USD-PERP\",\"amount\":\"-0.42\",\"rate\":\"0.0001\",\"positionSize\":\"0.01\",\"time\":1767225600}]}`, newest first; empty until a position has been held over a funding time."},
	{Operation: OpGetEvents, Params: `"types":"order,fill","limit":5`, Note: "The oldest kept order and fill events; pass `next` as `after` to read on."},
	{Operation: OpWaitForOrder, Params: `"orderId":"$ORDER_ID","until":"done","timeoutSeconds":5`, Note: "The order cancelled above is final already, so this answers at once with `reached:true`; for a resting order it waits up to timeoutSeconds."},
	{Operation: OpSetDeadManSwitch, Params: `"market":"BTC-USD-PERP","timeoutSeconds":0`, Note: "0 turns the switch off."},
}

// firstExample is the first example of operation name: the shell
// function's own example is a plain read that answers on any account.
func firstExample(name string) Example {
	for _, e := range Examples {
		if e.Operation == name {
			return e
		}
	}
	panic("contract: no example of " + name)
}

// Body returns the example's request body with credentialId set to cred.
func (e Example) Body(cred string) string {
	if e.NoCredential() && e.Params == "" {
		return fmt.Sprintf(`{"operation":%q}`, e.Operation)
	}
	if e.NoCredential() {
		return fmt.Sprintf(`{"operation":%q,%s}`, e.Operation, e.Params)
	}
	if e.Params == "" {
		return fmt.Sprintf(`{"operation":%q,"credentialId":%q}`, e.Operation, cred)
	}
	return fmt.Sprintf(`{"operation":%q,"credentialId":%q,%s}`, e.Operation, cred, e.Params)
}

// NoCredential reports whether the example names an exchange instead of a
// credential (getCapabilities by exchange) or takes none (getCredentials).
func (e Example) NoCredential() bool {
	op, ok := Lookup(e.Operation)
	return ok && op.Keyless || ok && op.ByExchange && strings.Contains(e.Params, `"exchange":`)
}

// errorsOf lists the codes an operation adds to those every call may get.
func errorsOf(op *Operation) []Code {
	var out []Code
	if _, ok := SpecOf(op.Params).byName["market"]; ok {
		out = append(out, CodeUnknownMarket)
	}
	if op.Places() {
		out = append(out, CodeIdempotencyConflict)
	}
	return out
}

// Reference renders docs/api.md.
func Reference() []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# API reference\n\n")
	w("<!-- Generated from the operation table (pkg/contract) by `make docs`; do not edit by hand. -->\n\n")
	w("Every call is `POST /v1` with a JSON object: `operation` names one of the operations below (the 20 of the contract, then the extension operations), ")
	w("`credentialId` the exchange credential to act with, and the operation's parameters sit beside them. ")
	w("Send the API key as `X-API-Key: <key>` or `Authorization: Bearer <key>`. ")
	w("A success answers `{\"success\":true, ...result fields}`; a failure answers ")
	w("`{\"success\":false,\"code\":...,\"error\":...}` with the HTTP status of its code (see [Errors](#errors)). ")
	w("The same operations are MCP tools at `/mcp`, with the snake_case names given below; ")
	w("the machine-readable form is `GET /openapi.json`.\n\n")
	w("Conventions: prices and sizes are decimal strings (sizes in base-asset units, prices in quote currency), ")
	w("times are Unix seconds, markets are answered in their canonical form `BASE-QUOTE-PERP`.\n\n")
	w("The examples run top to bottom on a fresh paper account (`make run`). They write the credential as `$CRED`; ")
	w("this shell function (bash or zsh) fills it in and sends the body, with `PG`, `KEY` and `CRED` taken from ")
	w("`.perpgate/bootstrap.json` (`jq` reads it):\n\n")
	w("```sh\nexport PG=http://localhost:8080 KEY=$(jq -r .apiKey .perpgate/bootstrap.json) CRED=$(jq -r .credentialId .perpgate/bootstrap.json)\n")
	w("v1() { curl -s \"$PG/v1\" -H \"X-API-Key: $KEY\" -H 'Content-Type: application/json' -d \"${1//\\$CRED/$CRED}\"; echo; }\n")
	w("v1 '%s'\n```\n\n", firstExample(OpGetMarkPrice).Body("$CRED"))
	w("`$ORDER_ID` in the modifyOrder, cancelOrder and waitForOrder examples stands for the `orderId` the resting limit order answered.\n\n")

	w("## Operations\n\n| operation | MCP tool | minimum tier | |\n|---|---|---|---|\n")
	for _, op := range Operations {
		kind := "read-only"
		if !op.ReadOnly {
			kind = "changes orders or positions"
		}
		if op.Extension {
			kind += ", *extension*"
		}
		w("| [`%s`](#%s) | `%s` | %s | %s |\n", op.Name, strings.ToLower(op.Name), op.Tool, op.MinTier, kind)
	}
	w("\n")
	for _, op := range Operations {
		writeOperation(&b, op)
	}
	writeEvents(&b)
	writeErrors(&b)
	return b.Bytes()
}

func writeOperation(b *bytes.Buffer, op *Operation) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## %s\n\n", op.Name)
	w("MCP tool `%s` · %s group · %s tier or above\n\n%s\n\n", op.Tool, op.Group, op.MinTier, op.Summary)
	if op.Extension {
		w("*Extension operation*: beyond the 20 operations of the contract; OpenAPI marks it `x-perpgate-extension: true`.\n\n")
	}
	switch {
	case op.Keyless:
		w("**Parameters** (besides `operation`; no `credentialId`)\n\n")
	case op.ByExchange:
		w("**Parameters** (besides `operation`; give `credentialId` or `exchange`, not both)\n\n")
	default:
		w("**Parameters** (besides `operation` and `credentialId`)\n\n")
	}
	spec := SpecOf(op.Params)
	if len(spec.Fields) == 0 {
		w("None.\n\n")
	} else {
		w("| field | type | required | description |\n|---|---|---|---|\n")
		writeFields(b, "", spec)
		w("\n")
	}
	w("**Result fields**\n\n")
	rows := resultRows("", op.Result)
	if len(rows) == 0 {
		w("None besides `success`.\n\n")
	} else {
		w("| field | type |\n|---|---|\n")
		for _, r := range rows {
			w("| `%s` | %s |\n", r[0], r[1])
		}
		w("\n")
	}
	for _, e := range Examples {
		if e.Operation != op.Name {
			continue
		}
		w("**Example**")
		if e.Note != "" {
			w(": %s", e.Note)
		}
		w("\n\n```json\n%s\n```\n\n", e.Body("$CRED"))
	}
	if codes := errorsOf(op); len(codes) > 0 {
		names := make([]string, len(codes))
		for i, c := range codes {
			names[i] = fmt.Sprintf("`%s` (%d)", c, c.Status())
		}
		w("**Errors** besides those of every call: %s.", strings.Join(names, ", "))
		if op.Places() {
			w(" A timeout (`EXCHANGE_TIMEOUT`) leaves the order's state unknown: look it up by clientOrderId with getOrders before placing again, or repeat the call with the same clientOrderId.")
		}
		w("\n\n")
	}
}

func writeFields(b *bytes.Buffer, prefix string, spec *StructSpec) {
	for i := range spec.Fields {
		f := &spec.Fields[i]
		req := ""
		if f.Required {
			req = "yes"
		}
		desc := f.Description
		switch {
		case len(f.Enum) > 0:
			desc += " One of " + strings.Join(f.Enum, ", ") + "."
		case f.Min != nil && f.Max != nil && f.kind == kindInt:
			desc += fmt.Sprintf(" From %d to %d.", *f.Min, *f.Max)
		}
		if f.HasDefault {
			desc += " Default " + f.Default + "."
		}
		typ := f.Kind()
		if f.kind == kindDecimal {
			typ = "decimal string"
			if f.Number {
				typ = "number"
			}
		}
		sub := "[]."
		if f.kind == kindSlice {
			typ = "array of objects"
		}
		if f.kind == kindObject {
			sub = "."
		}
		fmt.Fprintf(b, "| `%s%s` | %s | %s | %s |\n", prefix, f.Name, typ, req, strings.TrimSpace(desc))
		if f.Elem != nil {
			writeFields(b, prefix+f.Name+sub, f.Elem)
		}
	}
}

// resultRows flattens a result type into (field path, type) rows.
func resultRows(prefix string, t reflect.Type) [][2]string {
	var rows [][2]string
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		path := prefix + name
		switch {
		case ft == decimalType:
			rows = append(rows, [2]string{path, "decimal string"})
		case ft == levelType:
			rows = append(rows, [2]string{path, "[price, size]"})
		case ft == errorType:
			rows = append(rows, [2]string{path, "error object (code, error, reason, exchangeCode, exchangeMessage), only when refused"})
		case ft.Kind() == reflect.Slice && ft.Elem() == levelType:
			rows = append(rows, [2]string{path, "array of [price, size] decimal-string pairs"})
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			rows = append(rows, [2]string{path, "array of objects"})
			rows = append(rows, resultRows(path+"[].", ft.Elem())...)
		case ft.Kind() == reflect.Struct:
			rows = append(rows, resultRows(path+".", ft)...)
		default:
			typ, _ := typeSchema(ft)["type"].(string)
			if e, ok := typeSchema(ft)["enum"].([]string); ok {
				typ += ": " + strings.Join(e, ", ")
			}
			rows = append(rows, [2]string{path, typ})
		}
	}
	return rows
}

func writeErrors(b *bytes.Buffer) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Errors\n\n")
	w("Every error is `{\"success\":false,\"code\":\"...\",\"error\":\"what went wrong and what to fix\"}` with the status below. ")
	w("`EXCHANGE_ERROR` adds `reason`, `exchangeCode` and `exchangeMessage`; `RATE_LIMITED` and `SERVICE_UNAVAILABLE` ")
	w("add a `Retry-After` header. Every response carries `X-Request-Id`; quote it when reporting a problem.\n\n")
	w("| status | code | note |\n|---|---|---|\n")
	byStatus := v1CodesByStatus()
	for _, status := range []int{400, 401, 403, 404, 405, 409, 413, 429, 500, 502, 503, 504} {
		for _, c := range byStatus[status] {
			w("| %d %s | `%s` | %s |\n", status, http.StatusText(status), c, codeNotes[c])
		}
	}
	w("\n`EXCHANGE_ERROR` reasons: INSUFFICIENT_MARGIN, INVALID_ORDER, POST_ONLY_REJECTED, ORDER_NOT_FOUND, ")
	w("AUTHENTICATION_FAILED, PERMISSION_DENIED, UPSTREAM_RATE_LIMITED, UPSTREAM_UNAVAILABLE, UNKNOWN.\n")
}

// codeNotes say when each /v1 code is answered.
var codeNotes = map[Code]string{
	CodeMissingAPIKey:        "No key in X-API-Key or Authorization: Bearer.",
	CodeInvalidKeyFormat:     "The key does not start with mt_live_ or mt_test_.",
	CodeInvalidAPIKey:        "No such key.",
	CodeKeyRevoked:           "The key was revoked.",
	CodeKeyExpired:           "The key's expiry has passed.",
	CodeTierInsufficient:     "The account's tier may not call this operation.",
	CodeOperationNotAllowed:  "The key's scope excludes this operation.",
	CodeCredentialNotAllowed: "The key's scope excludes this credential.",
	CodeExchangeNotAllowed:   "The key's scope excludes this credential's exchange.",
	CodeEnvironmentMismatch:  "A live key with a testnet credential, or a test key with a mainnet one.",
	CodeMissingOperation:     "The body has no operation field.",
	CodeUnknownOperation:     "No such operation; the message suggests the closest.",
	CodeInvalidJSON:          "The body is not a JSON object.",
	CodeInvalidRequest:       "A parameter is missing, unknown, of the wrong type or out of range; the message names it.",
	CodeUnknownMarket:        "The exchange has no such perpetual market.",
	CodeCredentialNotFound:   "No such credential for this account.",
	CodeMethodNotAllowed:     "Only POST; the Allow header says so.",
	CodePayloadTooLarge:      "Bodies are limited to 64 KiB.",
	CodeIdempotencyConflict:  "The clientOrderId was used in the last 24 h with other parameters; the message names the differing fields.",
	CodeRateLimited:          "The key's minute or day window is full; Retry-After says when to retry. Refused calls do not count.",
	CodeInternal:             "A gateway fault; nothing internal is shown.",
	CodeExchangeError:        "The exchange refused or failed the call.",
	CodeExchangeUnavailable:  "No connector for the exchange is running.",
	CodeServiceUnavailable:   "A dependency of the gateway (Redis, keys service, NATS) is down; Retry-After says when to retry.",
	CodeExchangeTimeout:      "No answer within the request deadline; for placements the order's state is unknown.",
}
