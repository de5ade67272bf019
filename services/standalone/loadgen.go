package standalone

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LoadOptions configure one load generator run (`perpgate loadgen`).
type LoadOptions struct {
	URL, Key, Body string
	Concurrency    int
	Duration       time.Duration
	// Mode "read" repeats Body; "place-cancel" places a resting paper limit
	// order and cancels it, counting each pair as one request; "place"
	// places resting post-only limit buys with fresh clientOrderIds.
	Mode       string
	Credential string // for place-cancel and place
	// Count, when positive, ends the run after that many requests (Duration
	// then only bounds it).
	Count int
	// Rate, when positive, paces the workers together to that many
	// requests a second.
	Rate float64
}

// flatWindow is how many requests at each end of a concurrency-1 run
// FirstP50 and LastP50 cover (DESIGN §13 place_flat_ratio).
const flatWindow = 1000

// Load runs keep-alive workers against a target for the duration and
// returns what they measured; it is meant to run in a process of its own.
// Each worker owns one connection and writes its request and reads the
// answer on its own goroutine, as wrk does: net/http's client adds two
// goroutine hand-offs per request (its connection's read and write
// loops), which showed as 70 µs of every concurrency-1 latency.
func Load(ctx context.Context, o LoadOptions) (benchResult, error) {
	if o.Concurrency < 1 || o.Duration <= 0 || o.URL == "" {
		return benchResult{}, fmt.Errorf("loadgen: need --url, --concurrency ≥ 1 and --duration > 0")
	}
	once := o.read
	switch o.Mode {
	case "", "read":
	case "place-cancel":
		once = o.placeCancel
	case "place":
		once = o.placeResting()
	default:
		return benchResult{}, fmt.Errorf("loadgen: --mode %q is not read, place-cancel or place", o.Mode)
	}
	u, err := url.Parse(o.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return benchResult{}, fmt.Errorf("loadgen: --url %q is not an http:// URL", o.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var res benchResult
	var wg sync.WaitGroup
	var started atomic.Int64
	more := func() bool { return o.Count <= 0 || started.Add(1) <= int64(o.Count) }
	if o.Rate > 0 {
		tick := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
		defer tick.Stop()
		counted := more
		more = func() bool {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return false
			}
			return counted()
		}
	}
	start := time.Now()
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &loadConn{host: u.Host, path: u.RequestURI(), key: o.Key}
			defer c.close()
			var mine []time.Duration
			fails := 0
			var failedBy map[string]int
			for ctx.Err() == nil && more() {
				t0 := time.Now()
				c.failed = ""
				ok := once(ctx, c)
				if ctx.Err() != nil {
					break
				}
				if !ok {
					fails++
					failedBy = addCounts(failedBy, map[string]int{cmp.Or(c.failed, "unexpected answer"): 1})
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			if o.Concurrency == 1 && len(mine) >= 2*flatWindow {
				res.FirstP50 = p50(mine[:flatWindow])
				res.LastP50 = p50(mine[len(mine)-flatWindow:])
			}
			lat = append(lat, mine...)
			res.Failures += fails
			res.FailedBy = addCounts(res.FailedBy, failedBy)
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

// p50 is the median of lat in milliseconds; it sorts a copy.
func p50(lat []time.Duration) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// loadConn is one keep-alive HTTP/1.1 connection of one worker. A failed
// exchange closes it; the next request dials again.
type loadConn struct {
	host, path, key string
	conn            net.Conn
	br              *bufio.Reader
	req             []byte
	// failed says why the last request failed: its status and code, or
	// the connection's error.
	failed string
}

// post sends body and returns the answer's body when its status is 200.
func (c *loadConn) post(ctx context.Context, body []byte) ([]byte, bool) {
	if c.conn == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.host)
		if err != nil {
			c.failed = "dial: " + err.Error()
			return nil, false
		}
		if d, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(d.Add(5 * time.Second)) // the last request may finish after the run
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 16<<10)
	}
	c.req = append(c.req[:0], "POST "...)
	c.req = append(c.req, c.path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.host...)
	c.req = append(c.req, "\r\nContent-Type: application/json\r\nX-API-Key: "...)
	c.req = append(c.req, c.key...)
	c.req = append(c.req, "\r\nContent-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	if _, err := c.conn.Write(c.req); err != nil {
		c.failed = "write: " + err.Error()
		c.close()
		return nil, false
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.failed = "read: " + err.Error()
		c.close()
		return nil, false
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		c.close()
	}
	switch {
	case err != nil:
		c.failed = "read: " + err.Error()
	case resp.StatusCode != http.StatusOK:
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(b, &e)
		c.failed = strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, e.Code))
	}
	return b, err == nil && resp.StatusCode == http.StatusOK
}

func (c *loadConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.br = nil, nil
	}
}

func (o LoadOptions) read(ctx context.Context, c *loadConn) bool {
	_, ok := c.post(ctx, []byte(o.Body))
	return ok
}

// placeResting returns a request that places a post-only BTC buy far below
// the paper mark (it rests; 0.001 at 10000 is the smallest notional the
// paper market takes) under a clientOrderId no other request of any run
// uses.
func (o LoadOptions) placeResting() func(context.Context, *loadConn) bool {
	var run [6]byte
	_, _ = rand.Read(run[:])
	prefix := "bench-" + hex.EncodeToString(run[:]) + "-"
	var n atomic.Int64
	return func(ctx context.Context, c *loadConn) bool {
		b, ok := c.post(ctx, fmt.Appendf(nil, `{"operation":"placeLimitOrder","credentialId":%q,"market":"BTC","side":"BUY",`+
			`"size":"0.001","price":"10000","postOnly":true,"clientOrderId":"%s%d"}`, o.Credential, prefix, n.Add(1)))
		return ok && bytes.Contains(b, []byte(`"status":"OPEN"`))
	}
}

func (o LoadOptions) placeCancel(ctx context.Context, c *loadConn) bool {
	b, ok := c.post(ctx, fmt.Appendf(nil,
		`{"operation":"placeLimitOrder","credentialId":%q,"market":"BTC","side":"BUY","size":"0.001","price":"30000"}`, o.Credential))
	if !ok {
		return false
	}
	var placed struct {
		OrderID string `json:"orderId"`
	}
	if json.Unmarshal(b, &placed) != nil || placed.OrderID == "" {
		return false
	}
	_, ok = c.post(ctx, fmt.Appendf(nil,
		`{"operation":"cancelOrder","credentialId":%q,"orderId":%q,"market":"BTC"}`, o.Credential, placed.OrderID))
	if !ok {
		c.failed = "cancel: " + c.failed
	}
	return ok
}
