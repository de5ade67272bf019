package standalone

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// eventRate is how many placements a second the event latency run sends.
const eventRate = 100

// measureEvents is the event latency of DESIGN §13: market orders on paper
// (each fills at once) sent at eventRate a second while an SSE client
// follows the credential's fills; each latency runs from sending the
// placement to reading its fill on the stream, so it holds the fill's way
// through the event stream and the edge. It returns the p50 and p99 in ms.
func measureEvents(ctx context.Context, base, key, cred string, d time.Duration) (p50, p99 float64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events?types=fill&credentialId="+cred, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("bench events: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, 0, fmt.Errorf("bench events: GET /v1/events: %d %s", resp.StatusCode, b)
	}
	var mu sync.Mutex
	sent := map[string]time.Time{} // clientOrderId -> when its placement was sent
	var lat []time.Duration
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			read := time.Now()
			var ev struct {
				Data struct {
					ClientOrderID string `json:"clientOrderId"`
				} `json:"data"`
			}
			if json.Unmarshal([]byte(line), &ev) != nil {
				continue
			}
			mu.Lock()
			if t, ok := sent[ev.Data.ClientOrderID]; ok {
				lat = append(lat, read.Sub(t))
				delete(sent, ev.Data.ClientOrderID) // a placement that took several book levels counts once
			}
			mu.Unlock()
		}
	}()
	client := &http.Client{Timeout: 10 * time.Second}
	n := max(int(d.Seconds()*eventRate), 50)
	tick := time.NewTicker(time.Second / eventRate)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		side := []string{"BUY", "SELL"}[i%2] // stays flat
		cid := fmt.Sprintf("bench-ev-%d-%d", time.Now().UnixNano(), i)
		body := fmt.Sprintf(`{"operation":"placeMarketOrder","credentialId":%q,"market":"BTC-USD-PERP","side":%q,"size":"0.001","clientOrderId":%q}`, cred, side, cid)
		mu.Lock()
		sent[cid] = time.Now()
		mu.Unlock()
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1", bytes.NewReader([]byte(body)))
		r.Header.Set("X-API-Key", key)
		r.Header.Set("Content-Type", "application/json")
		pr, err := client.Do(r)
		if err != nil {
			return 0, 0, fmt.Errorf("bench events: place: %w", err)
		}
		_, _ = io.Copy(io.Discard, pr.Body)
		pr.Body.Close()
		if pr.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("bench events: place answered %d", pr.StatusCode)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := len(lat)
		mu.Unlock()
		if got == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) < n {
		return 0, 0, fmt.Errorf("bench events: %d of %d fills reached the stream", len(lat), n)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	return pct(0.5), pct(0.99), nil
}
