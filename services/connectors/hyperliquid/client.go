package hyperliquid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"golang.org/x/time/rate"
)

// infoWeights are the per-IP weights of /info request types (fact sheet
// §10); others weigh 20. Listing reads add weight per returned item, which
// weigh() charges up front as a conservative estimate.
var infoWeights = map[string]int{
	"l2Book": 2, "allMids": 2, "clearinghouseState": 2, "orderStatus": 2,
	"spotClearinghouseState": 2, "exchangeStatus": 2, "userRole": 60,
}

// extraItems estimates the items a listing read returns, for its extra
// weight (+1 per 20 fills, +1 per 60 candles).
var extraItems = map[string]int{"userFills": 2000 / 20, "candleSnapshot": 500 / 60, "userFunding": 500 / 20}

func infoWeight(typ string) int {
	w, ok := infoWeights[typ]
	if !ok {
		w = 20
	}
	return w + extraItems[typ]
}

// exchangeWeight is 1 + floor(n/40) for an action carrying n orders or cancels.
func exchangeWeight(n int) int { return 1 + n/40 }

// client speaks Hyperliquid's HTTP API for one base URL and spends the
// process's per-IP weight budget.
type client struct {
	http   *http.Client
	budget *rate.Limiter
}

func newClient(h *http.Client, weightPerMinute int) *client {
	perSecond := rate.Limit(float64(weightPerMinute) / 60)
	return &client{http: h, budget: rate.NewLimiter(perSecond, weightPerMinute)}
}

// spend takes weight from the IP budget, waiting when the wait fits in the
// request's deadline; otherwise it answers UPSTREAM_RATE_LIMITED at once,
// so the gateway never earns the venue's 429 (and its IP ban) by itself.
func (c *client) spend(ctx context.Context, weight int) error {
	weight = min(weight, c.budget.Burst())
	r := c.budget.ReserveN(time.Now(), weight)
	delay := r.Delay()
	if delay == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < delay || delay > 5*time.Second {
		r.Cancel()
		s := venuekit.Seconds(delay)
		return connector.RateLimited("", "", s, "hyperliquid request weight budget of this connector is used up; retry in %d s", s)
	}
	if err := connector.SleepContext(ctx, delay); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// post sends a JSON body to base+path and decodes a 200 answer into out.
func (c *client) post(ctx context.Context, url string, weight int, body, out any) error {
	if err := c.spend(ctx, weight); err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "hyperliquid is not reachable")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "hyperliquid answer was cut off")
	}
	if err := httpError(resp.StatusCode, raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return contract.Upstream(contract.ReasonUnknown, "", "", "hyperliquid answered with an unexpected body")
	}
	return nil
}

// httpError maps non-200 answers: 429 is the IP weight limit, 5xx an
// outage, other 4xx (422: the body did not deserialize) a refused request.
func httpError(status int, raw []byte) error {
	if status == http.StatusOK {
		return nil
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 300 {
		msg = msg[:300]
	}
	code := fmt.Sprint(status)
	switch {
	case status == http.StatusTooManyRequests:
		return connector.RateLimited(code, msg, 60, "hyperliquid rate limit reached (per-IP request weight)")
	case status >= 500:
		return contract.Upstream(contract.ReasonUpstreamUnavailable, code, msg, "hyperliquid is unavailable (HTTP %d)", status)
	default:
		return contract.Upstream(contract.ReasonInvalidOrder, code, msg, "hyperliquid refused the request (HTTP %d): %s", status, msg)
	}
}

// errEmpty marks an ok answer without the expected statuses.
var errEmpty = errors.New("hyperliquid answer carries no statuses")
