package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// LoadOptions configure one load generator run (`perpgate loadgen`).
type LoadOptions struct {
	URL, Key, Body string
	Concurrency    int
	Duration       time.Duration
	// Mode "read" repeats Body; "place-cancel" places a resting paper limit
	// order and cancels it, counting each pair as one request.
	Mode       string
	Credential string // for place-cancel
}

// Load runs keep-alive workers against a target for the duration and
// returns what they measured; it is meant to run in a process of its own.
func Load(ctx context.Context, o LoadOptions) (benchResult, error) {
	if o.Concurrency < 1 || o.Duration <= 0 || o.URL == "" {
		return benchResult{}, fmt.Errorf("loadgen: need --url, --concurrency ≥ 1 and --duration > 0")
	}
	once := o.read
	switch o.Mode {
	case "", "read":
	case "place-cancel":
		once = o.placeCancel
	default:
		return benchResult{}, fmt.Errorf("loadgen: --mode %q is neither read nor place-cancel", o.Mode)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Concurrency, MaxConnsPerHost: o.Concurrency,
		DisableCompression: true}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var res benchResult
	var wg sync.WaitGroup
	start := time.Now()
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			fails := 0
			for ctx.Err() == nil {
				t0 := time.Now()
				ok := once(ctx, client)
				if ctx.Err() != nil {
					break
				}
				if !ok {
					fails++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			res.Failures += fails
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	res.Requests = len(lat)
	res.RPS = float64(len(lat)) / elapsed.Seconds()
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	res.P50, res.P99 = pct(0.5), pct(0.99)
	return res, nil
}

func (o LoadOptions) post(ctx context.Context, client *http.Client, body []byte) (map[string]any, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL, bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", o.Key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out, true
}

func (o LoadOptions) read(ctx context.Context, client *http.Client) bool {
	_, ok := o.post(ctx, client, []byte(o.Body))
	return ok
}

func (o LoadOptions) placeCancel(ctx context.Context, client *http.Client) bool {
	placed, ok := o.post(ctx, client, fmt.Appendf(nil,
		`{"operation":"placeLimitOrder","credentialId":%q,"market":"BTC","side":"BUY","size":"0.001","price":"30000"}`, o.Credential))
	if !ok {
		return false
	}
	id, _ := placed["orderId"].(string)
	_, ok = o.post(ctx, client, fmt.Appendf(nil,
		`{"operation":"cancelOrder","credentialId":%q,"orderId":%q,"market":"BTC"}`, o.Credential, id))
	return ok
}
