package contract

import (
	"bytes"
	"fmt"
	"reflect"
)

// writeEvents renders the account events section of docs/api.md: the
// endpoints, the event envelope, each type's data and the resume rules.
func writeEvents(b *bytes.Buffer) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Account events\n\n")
	w("Every order, fill, position, balance and funding change of a credential, pushed as it happens:\n\n")
	w("- `GET /v1/events?credentialId=<uuid>&types=&markets=&after=`: Server-Sent Events. ")
	w("`types` and `markets` are comma-separated filters; `after` (or the `Last-Event-ID` header) resumes.\n")
	w("- `GET /v1/ws`: a WebSocket carrying several credentials. Client messages ")
	w("`{\"op\":\"subscribe\",\"credentialId\":\"…\",\"after\":\"…\",\"types\":[\"order\"],\"markets\":[\"BTC\"]}` ")
	w("(after, types, markets optional) and `{\"op\":\"unsubscribe\",\"credentialId\":\"…\"}`; server messages ")
	w("`{\"op\":\"subscribed\",\"credentialId\":\"…\"}`, `{\"op\":\"event\",\"event\":{…}}` and `{\"op\":\"error\",\"code\":\"…\",\"error\":\"…\"}`.\n")
	w("- [`getEvents`](#getevents) and [`waitForOrder`](#waitfororder) read the same events through `POST /v1` and MCP.\n\n")
	w("The key is sent as for `/v1` (`X-API-Key` or `Authorization: Bearer`), or as the `api_key` query parameter ")
	w("for EventSource and browsers. Everything `/v1` checks applies: an error before the stream starts is the JSON ")
	w("error envelope with `X-Request-Id`; the key's `allowedOperations` must include `getEvents` when it is set; ")
	w("credential, environment and exchange scope as for any operation; `allowedMarkets` drops other markets' events. ")
	w("A key may hold a limited number of streams open at once (SSE streams and WebSocket subscriptions together): ")
	w("free 2, builder 10, pro 50; one more is `429 RATE_LIMITED`. When the key is revoked, halted or edited, or the ")
	w("credential deleted, its open streams close within a second.\n\n")
	w("An SSE event is an `id:` line and a `data:` line with the event as JSON; an idle stream gets a `: keep-alive` comment every 15 s.\n\n")
	w("```sh\ncurl -N \"$PG/v1/events?credentialId=$CRED\" -H \"X-API-Key: $KEY\"\n```\n\n")

	w("### The event\n\n| field | type | |\n|---|---|---|\n")
	for _, r := range [][3]string{
		{"id", "string", "opaque; resumes the stream (SSE `id`, `Last-Event-ID`, `after`)"},
		{"type", "string", "`order`, `fill`, `position`, `balance`, `funding`, `error` or `reset`"},
		{"credentialId", "string", ""},
		{"exchange", "string", ""},
		{"time", "integer", "venue time, Unix ms"},
		{"receivedAt", "integer", "gateway time, Unix ms"},
		{"source", "string", "`stream` (pushed by the venue) or `reconcile` (found by a snapshot after a gap)"},
		{"data", "object", "by type, below"},
	} {
		w("| `%s` | %s | %s |\n", r[0], r[1], r[2])
	}
	w("\n")
	for _, d := range []struct {
		typ  EventType
		t    reflect.Type
		note string
	}{
		{EventOrder, reflect.TypeFor[OrderEvent](), "Statuses as getOrders: OPEN, PENDING, FILLED, CANCELLED, REJECTED; a partly filled resting order is OPEN with filledSize above zero. `reason` says why an order ended when not by its owner."},
		{EventFill, reflect.TypeFor[FillEvent](), "`fee` in `feeAsset`; `liquidity` MAKER or TAKER; `timestamp` in Unix seconds, as getFills."},
		{EventPosition, reflect.TypeFor[PositionEvent](), "`side` LONG, SHORT or FLAT (closed, size 0)."},
		{EventBalance, reflect.TypeFor[BalanceEvent](), ""},
		{EventFunding, reflect.TypeFor[FundingEvent](), "`amount` is negative when the account paid."},
		{EventError, reflect.TypeFor[ErrorEvent](), "The venue's private stream failed, e.g. its login was refused."},
	} {
		w("**%s**", d.typ)
		if d.note != "" {
			w(": %s", d.note)
		}
		w("\n\n| field | type |\n|---|---|\n")
		for _, r := range resultRows("", d.t) {
			if d.typ == EventPosition && r[0] == "side" {
				r[1] = "string: LONG, SHORT, FLAT"
			}
			w("| `%s` | %s |\n", r[0], r[1])
		}
		w("\n")
	}
	w("**reset**: data `{}`. The resume point is older than the retention (or unknown): take a snapshot ")
	w("(getOrders, getPositions, getBalance) and go on from this event's id.\n\n")

	w("### Resuming\n\n")
	w("- Events of a credential arrive in the order they happened, each once. Reconnect with the last id you received ")
	w("(`Last-Event-ID` header, which EventSource sends itself, or `after=`): you get exactly the events after it, none twice.\n")
	w("- Without an id a stream starts with the events from then on.\n")
	w("- Events are kept for `PERPGATE_EVENTS_RETENTION` (default 24h). A resume point older than that, or not an id of ")
	w("this gateway, starts with a `reset` event.\n")
	w("- A fill is delivered once even when a venue feed and a reconciliation both see it (fills are deduplicated by fill ")
	w("id, order states by order id, status and filled size).\n\n")

	w("### The venue's feed\n\n")
	w("The gateway follows a credential's private feed at its venue while anyone listens (an open stream, a ")
	w("waitForOrder), while the credential has open orders or positions, and for `PERPGATE_EVENTS_IDLE` (default 10m) ")
	w("after. A stream that opens waits (at most 2 s) until the feed is open, so it misses nothing that follows. ")
	w("Whenever the feed (re)connects, reopens after idling or moves to another gateway replica, a REST snapshot ")
	w("publishes what changed meanwhile, with `source: \"reconcile\"`: open orders whose state differs from the last ")
	w("one published, the final state of orders no longer open (where the venue finds them by clientOrderId), the fills ")
	w("after the last one published, and positions that differ (FLAT for those closed). A reconciled fill has no ")
	w("`liquidity` (REST does not say) and its `feeAsset` is the market's quote currency. A venue that refuses the ")
	w("feed's login gives one `error` event naming the credential and the venue's reason; the gateway retries, ")
	w("5 s doubling to a minute, without repeating the event.\n\n")
}
