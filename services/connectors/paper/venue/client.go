package venue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Client calls a paper venue. Error answers come back as *Error; transport
// failures and ctx errors are wrapped as they are.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the venue at baseURL (e.g.
// http://127.0.0.1:8090); a nil hc means http.DefaultClient.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: hc}
}

// Markets lists every market.
func (c *Client) Markets(ctx context.Context) ([]MarketInfo, error) {
	var out MarketsResponse
	err := c.do(ctx, http.MethodGet, "/v1/markets", nil, nil, &out)
	return out.Markets, err
}

// Market returns one market.
func (c *Client) Market(ctx context.Context, market string) (MarketInfo, error) {
	var out MarketInfo
	err := c.do(ctx, http.MethodGet, "/v1/markets/"+url.PathEscape(market), nil, nil, &out)
	return out, err
}

// Orderbook returns depth levels per side (0 means 20).
func (c *Client) Orderbook(ctx context.Context, market string, depth int) (Orderbook, error) {
	var out Orderbook
	err := c.do(ctx, http.MethodGet, "/v1/markets/"+url.PathEscape(market)+"/book", query("depth", depth), nil, &out)
	return out, err
}

// MarkPrice returns a market's mark and index price.
func (c *Client) MarkPrice(ctx context.Context, market string) (MarkPrice, error) {
	var out MarkPrice
	err := c.do(ctx, http.MethodGet, "/v1/markets/"+url.PathEscape(market)+"/mark", nil, nil, &out)
	return out, err
}

// SetMarkPrice moves a market's mark price (tests and simulators).
func (c *Client) SetMarkPrice(ctx context.Context, market string, price decimal.Decimal) (MarkPrice, error) {
	var out MarkPrice
	err := c.do(ctx, http.MethodPut, "/v1/markets/"+url.PathEscape(market)+"/mark", nil, SetMarkRequest{Price: price}, &out)
	return out, err
}

// Candles returns up to limit bars of intervalMinutes, oldest first (zeros
// mean 60 minutes and 100 bars).
func (c *Client) Candles(ctx context.Context, market string, intervalMinutes, limit int) ([]Candle, error) {
	var out CandlesResponse
	q := query("interval", intervalMinutes, "limit", limit)
	err := c.do(ctx, http.MethodGet, "/v1/markets/"+url.PathEscape(market)+"/candles", q, nil, &out)
	return out.Candles, err
}

// Funding returns a market's funding rate and next funding time.
func (c *Client) Funding(ctx context.Context, market string) (Funding, error) {
	var out Funding
	err := c.do(ctx, http.MethodGet, "/v1/markets/"+url.PathEscape(market)+"/funding", nil, nil, &out)
	return out, err
}

// Fees returns maker and taker fees in basis points.
func (c *Client) Fees(ctx context.Context) (Fees, error) {
	var out Fees
	err := c.do(ctx, http.MethodGet, "/v1/fees", nil, nil, &out)
	return out, err
}

// EnsureAccount creates the account with startingBalance (zero means the
// venue's default) unless it exists, and returns its balance.
func (c *Client) EnsureAccount(ctx context.Context, account string, startingBalance decimal.Decimal) (Balance, error) {
	var out Balance
	err := c.do(ctx, http.MethodPut, accountPath(account, ""), nil, AccountRequest{StartingBalance: startingBalance}, &out)
	return out, err
}

// Balance returns an account's balance.
func (c *Client) Balance(ctx context.Context, account string) (Balance, error) {
	var out Balance
	err := c.do(ctx, http.MethodGet, accountPath(account, "/balance"), nil, nil, &out)
	return out, err
}

// Positions returns open positions on market, or all when market is "".
func (c *Client) Positions(ctx context.Context, account, market string) ([]Position, error) {
	var out PositionsResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/positions"), query("market", market), nil, &out)
	return out.Positions, err
}

// ClosePosition flattens the position on market with a reduce-only market
// order.
func (c *Client) ClosePosition(ctx context.Context, account, market string) (CloseResponse, error) {
	var out CloseResponse
	err := c.do(ctx, http.MethodPost, accountPath(account, "/positions/"+url.PathEscape(market)+"/close"), nil, nil, &out)
	return out, err
}

// Orders returns OPEN and PENDING orders on market, or all when market is "".
func (c *Client) Orders(ctx context.Context, account, market string) ([]Order, error) {
	var out OrdersResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/orders"), query("market", market), nil, &out)
	return out.Orders, err
}

// OrderByClientID returns the newest order with that client order id, in
// any state; ORDER_NOT_FOUND when there is none.
func (c *Client) OrderByClientID(ctx context.Context, account, clientOrderID string) (Order, error) {
	var out OrdersResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/orders"), query("clientOrderId", clientOrderID), nil, &out)
	if err != nil {
		return Order{}, err
	}
	if len(out.Orders) == 0 {
		return Order{}, &Error{Kind: KindOrderNotFound, Message: "no order with client id " + clientOrderID, Status: http.StatusNotFound}
	}
	return out.Orders[0], nil
}

// Order returns one order by id, in any state.
func (c *Client) Order(ctx context.Context, account, orderID string) (Order, error) {
	var out Order
	err := c.do(ctx, http.MethodGet, accountPath(account, "/orders/"+url.PathEscape(orderID)), nil, nil, &out)
	return out, err
}

// PlaceOrder places an order and returns it after any immediate execution.
func (c *Client) PlaceOrder(ctx context.Context, account string, req OrderRequest) (Order, error) {
	var out Order
	err := c.do(ctx, http.MethodPost, accountPath(account, "/orders"), nil, req, &out)
	return out, err
}

// CancelOrder cancels an OPEN or PENDING order.
func (c *Client) CancelOrder(ctx context.Context, account, orderID string) (Order, error) {
	var out Order
	err := c.do(ctx, http.MethodDelete, accountPath(account, "/orders/"+url.PathEscape(orderID)), nil, nil, &out)
	return out, err
}

// CancelAll cancels OPEN and PENDING orders on market, or all when market is
// "", and returns how many.
func (c *Client) CancelAll(ctx context.Context, account, market string) (int, error) {
	var out CancelAllResponse
	err := c.do(ctx, http.MethodDelete, accountPath(account, "/orders"), query("market", market), nil, &out)
	return out.CancelledCount, err
}

// Fills returns up to limit fills (0 means 100), newest first, on market or
// all when market is "".
func (c *Client) Fills(ctx context.Context, account, market string, limit int) ([]Fill, error) {
	var out FillsResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/fills"), query("market", market, "limit", limit), nil, &out)
	return out.Fills, err
}

// Leverage returns the account's leverage on market.
func (c *Client) Leverage(ctx context.Context, account, market string) (int, error) {
	var out LeverageResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/leverage/"+url.PathEscape(market)), nil, nil, &out)
	return out.Leverage, err
}

// SetLeverage sets the account's leverage on market and returns it.
func (c *Client) SetLeverage(ctx context.Context, account, market string, leverage int) (int, error) {
	var out LeverageResponse
	err := c.do(ctx, http.MethodPut, accountPath(account, "/leverage/"+url.PathEscape(market)), nil, LeverageRequest{Leverage: leverage}, &out)
	return out.Leverage, err
}

func accountPath(account, rest string) string {
	return "/v1/accounts/" + url.PathEscape(account) + rest
}

// query builds a query from name/value pairs, leaving out "" and 0.
func query(kv ...any) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		name := kv[i].(string)
		switch v := kv[i+1].(type) {
		case string:
			if v != "" {
				q.Set(name, v)
			}
		case int:
			if v != 0 {
				q.Set(name, strconv.Itoa(v))
			}
		}
	}
	return q
}

// maxAnswer bounds how much of a venue answer is read.
const maxAnswer = 64 << 20

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("paper venue %s %s: encode: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("paper venue %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("paper venue %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("paper venue %s %s: read: %w", method, path, err)
	}
	if len(data) > maxAnswer {
		// Not an outage: the request asks for too much.
		return &Error{Kind: KindTooLarge, Status: resp.StatusCode, Message: fmt.Sprintf(
			"the paper venue's answer to %s %s is larger than the %d MiB the gateway reads: ask for less (name a market)",
			method, path, maxAnswer>>20)}
	}
	if resp.StatusCode >= 300 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Kind == "" {
			return &Error{Kind: KindInternal, Message: fmt.Sprintf("unreadable error answer (%d bytes)", len(data)), Status: resp.StatusCode}
		}
		return &Error{Kind: eb.Error.Kind, Message: eb.Error.Message, Status: resp.StatusCode}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("paper venue %s %s: decode: %w", method, path, err)
	}
	return nil
}
