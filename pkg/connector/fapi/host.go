package fapi

import (
	"context"
	"encoding/json"
	"net/http"
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
