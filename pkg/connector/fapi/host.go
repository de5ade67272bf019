package fapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Host is what a client knows about one REST base: its per-IP weight
// budget (X-MBX-USED-WEIGHT-1M) and the venue's clock.
type Host struct {
	Gate  *venuekit.WeightGate
	Clock *connector.ServerClock
}

// Send makes one HTTP exchange of weight within the host's budget: it
// waits for room (or answers rate-limited before the deadline), sends
// what build makes, takes the venue's own count from the answer, and
// turns a 429 or 418 into UPSTREAM_RATE_LIMITED, sending nothing more to
// the host until the wait the venue asked for has passed.
func (h Host) Send(ctx context.Context, hc *venuekit.HTTP, now func() time.Time, wait func(context.Context, time.Duration) error,
	weight int, what string, build func() (*http.Request, error)) (int, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	d, banned := h.Gate.Admit(h.Clock.Now(), weight)
	if banned > 0 {
		s := venuekit.Seconds(banned)
		return 0, nil, connector.RateLimited("", "", s, "%s rate-limited this IP; the connector sends nothing there for %d s", hc.Venue, s)
	}
	if err := venuekit.Pace(ctx, now(), d, wait,
		hc.Venue+" request weight of this IP is nearly used up this minute; retry in %d s"); err != nil {
		return 0, nil, err
	}
	req, err := build()
	if err != nil {
		return 0, nil, err
	}
	ans, err := hc.Send(ctx, req, what)
	if err != nil {
		return 0, nil, err
	}
	at := h.Clock.Now()
	h.Gate.Observe(at, ans.Header)
	if ans.Status == http.StatusTooManyRequests || ans.Status == http.StatusTeapot {
		return 0, nil, h.banned(hc.Venue, at, ans)
	}
	return ans.Status, ans.Body, nil
}

func (h Host) banned(venue string, now time.Time, ans venuekit.Answer) error {
	var e struct {
		Code connector.Int `json:"code"`
		Msg  string        `json:"msg"`
	}
	_ = json.Unmarshal(ans.Body, &e)
	d := venuekit.RetryAfter(now, ans.Status, ans.Header, e.Msg)
	h.Gate.Ban(now.Add(d))
	s := venuekit.Seconds(d)
	code := ""
	if e.Code != 0 {
		code = strconv.Itoa(int(e.Code))
	}
	return connector.RateLimited(code, e.Msg, s, "%s answered HTTP %d (rate limit); retry in %d s", venue, ans.Status, s)
}

// ServerTime reads the venue's clock from GET path ({"serverTime": ms})
// with get, the client's unsigned call.
func ServerTime(venue, path string, get func(ctx context.Context, out any) error) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		var st struct {
			ServerTime int64 `json:"serverTime"`
		}
		if err := get(ctx, &st); err != nil {
			return time.Time{}, err
		}
		if st.ServerTime <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "%s answered %s without serverTime", venue, path)
		}
		return time.UnixMilli(st.ServerTime), nil
	}
}

// Call is one REST request for Do.
type Call struct {
	Method, Path string
	Signed       bool
	Stale        []int                                    // codes refusing a signed request's timestamp or nonce
	Send         func() (int, []byte, error)              // one exchange, signed afresh each time
	Time         func(context.Context) (time.Time, error) // the venue's clock
	NotJSON      func(status int) error                   // an error answer that is not JSON; nil reads it as code 0
}

// Do sends call and decodes a 200 answer into out (when not nil). Venue
// errors come back as *contract.Error (e's table); a passed deadline as
// the context's error. A signed request refused for its clock (a Stale
// code) is retried once after measuring the clock again: the venue did
// not act on it.
func (h Host) Do(ctx context.Context, e Errors, call Call, out any) error {
	if call.Signed {
		if err := venuekit.Synced(ctx, h.Clock, call.Time); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		status, body, err := call.Send()
		if err != nil {
			return err
		}
		if status == http.StatusOK {
			if out != nil && json.Unmarshal(body, out) != nil {
				return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
					"%s answered %s %s with an unexpected body", e.Venue, call.Method, call.Path)
			}
			return nil
		}
		var ans struct {
			Code connector.Int `json:"code"`
			Msg  string        `json:"msg"`
		}
		if json.Unmarshal(body, &ans) != nil && call.NotJSON != nil {
			return call.NotJSON(status)
		}
		if call.Signed && attempt == 0 && slices.Contains(call.Stale, int(ans.Code)) {
			if err := h.Clock.Measure(ctx, call.Time); err != nil {
				return err
			}
			continue
		}
		return e.Upstream(status, int(ans.Code), ans.Msg)
	}
}
