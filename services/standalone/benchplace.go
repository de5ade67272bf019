package standalone

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// placeFigures are the DESIGN §13 placement fields of the bench line.
type placeFigures struct {
	c1, many, distC1 benchResult
}

// flatRatio is place_flat_ratio: the last flatWindow placements' p50 over
// the first's, 0 when not measured.
func (f placeFigures) flatRatio() float64 {
	if f.c1.FirstP50 <= 0 {
		return 0
	}
	return f.c1.LastP50 / f.c1.FirstP50
}

// benchPlacements measures resting post-only placements with fresh
// clientOrderIds on one paper account: count of them at concurrency 1 (the
// account's resting orders grow all along), then, after cancelling them,
// opts.Concurrency connections for opts.Duration; and, with dist, one
// connection for opts.C1Duration on the distributed deployment.
func benchPlacements(ctx context.Context, exe string, gw loadTarget, cred string, dist *loadTarget, distCred string,
	opts BenchOptions) (placeFigures, error) {
	var f placeFigures
	count := max(opts.PlaceCount, 2*flatWindow)
	if err := prepareAccount(ctx, gw, cred); err != nil {
		return f, err
	}
	var err error
	f.c1, err = runLoadgen(ctx, exe, gw, 1, 30*time.Minute, "place", cred, "--count", fmt.Sprint(count))
	if err != nil {
		return f, err
	}
	if err := cancelAll(ctx, gw, cred); err != nil {
		return f, err
	}
	if f.many, err = runLoadgen(ctx, exe, gw, opts.Concurrency, opts.Duration, "place", cred); err != nil {
		return f, err
	}
	if err := cancelAll(ctx, gw, cred); err != nil {
		return f, err
	}
	if dist == nil {
		return f, nil
	}
	if err := prepareAccount(ctx, *dist, distCred); err != nil {
		return f, err
	}
	if f.distC1, err = runLoadgen(ctx, exe, *dist, 1, opts.C1Duration, "place", distCred); err != nil {
		return f, err
	}
	return f, cancelAll(ctx, *dist, distCred)
}

// prepareAccount sets the bench market's leverage to 50, so the paper
// account's starting balance holds tens of thousands of resting orders.
func prepareAccount(ctx context.Context, t loadTarget, cred string) error {
	return call(ctx, t, fmt.Sprintf(`{"operation":"setLeverage","credentialId":%q,"market":"BTC","leverage":50}`, cred))
}

func cancelAll(ctx context.Context, t loadTarget, cred string) error {
	return call(ctx, t, fmt.Sprintf(`{"operation":"cancelAllOrders","credentialId":%q,"market":"BTC"}`, cred))
}

// call sends one operation and requires it to succeed.
func call(ctx context.Context, t loadTarget, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", t.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: %s answered %d: %s", body, resp.StatusCode, b)
	}
	return nil
}
