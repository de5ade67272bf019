package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/shopspring/decimal"
)

// maxNonces is how many of a signer's highest nonces the venue keeps.
const maxNonces = 20

type exchangeBody struct {
	Action       json.RawMessage `json:"action"`
	Nonce        uint64          `json:"nonce"`
	Signature    *hl.Signature   `json:"signature"`
	VaultAddress *string         `json:"vaultAddress"`
	ExpiresAfter *uint64         `json:"expiresAfter"`
}

func errAnswer(w http.ResponseWriter, msg string) {
	writeJSON(w, map[string]any{"status": "err", "response": msg})
}

func okAnswer(w http.ResponseWriter, typ string, statuses []any) {
	resp := map[string]any{"type": typ}
	if statuses != nil {
		resp["data"] = map[string]any{"statuses": statuses}
	}
	writeJSON(w, map[string]any{"status": "ok", "response": resp})
}

func (s *Sim) serveExchange(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		deserializeError(w, "body")
		return
	}
	var body exchangeBody
	if err := json.Unmarshal(raw, &body); err != nil || body.Action == nil || body.Signature == nil {
		deserializeError(w, "missing or malformed action, nonce or signature")
		return
	}
	action, err := hl.DecodeAction(body.Action)
	if err != nil {
		deserializeError(w, err.Error())
		return
	}
	normalize(action)
	var vault []byte
	if body.VaultAddress != nil && *body.VaultAddress != "" {
		if vault, err = hl.ParseAddress(*body.VaultAddress); err != nil {
			deserializeError(w, "vaultAddress")
			return
		}
	}
	h, err := hl.ActionHash(action, body.Nonce, vault, body.ExpiresAfter)
	if err != nil {
		deserializeError(w, err.Error())
		return
	}
	signer, master, mainnet, msg := s.authenticate(h, *body.Signature)
	if msg != "" {
		errAnswer(w, msg)
		return
	}
	if msg := s.checkNonce(signer, mainnet, body.Nonce, body.ExpiresAfter); msg != "" {
		errAnswer(w, msg)
		return
	}
	user := master
	if vault != nil {
		v := "0x" + fmt.Sprintf("%x", vault)
		s.mu.Lock()
		leader, ok := s.vaults[v]
		s.mu.Unlock()
		if !ok || leader != master {
			errAnswer(w, "Vault "+v+" does not exist or is not led by "+master+".")
			return
		}
		user = v
	}
	if msg := s.spend(user, action); msg != "" {
		errAnswer(w, msg)
		return
	}
	s.mu.Lock()
	s.actions = append(s.actions, Action{Signer: signer, User: user, Mainnet: mainnet, Nonce: body.Nonce, Action: action})
	s.mu.Unlock()
	switch a := action.(type) {
	case *hl.OrderAction:
		okAnswer(w, "order", s.orders(user, a))
	case *hl.CancelAction:
		out := make([]any, len(a.Cancels))
		for i, c := range a.Cancels {
			out[i] = s.cancel(user, c.Asset, strconv.FormatUint(c.Oid, 10))
		}
		okAnswer(w, "cancel", out)
	case *hl.CancelByCloidAction:
		out := make([]any, len(a.Cancels))
		for i, c := range a.Cancels {
			s.mu.Lock()
			id := s.cloids[user][strings.ToLower(c.Cloid)]
			s.mu.Unlock()
			out[i] = s.cancel(user, c.Asset, id)
		}
		okAnswer(w, "cancel", out)
	case *hl.UpdateLeverageAction:
		as, ok := s.asset(a.Asset)
		if !ok || !a.IsCross {
			errAnswer(w, "Invalid leverage value.")
			return
		}
		if _, err := s.eng.SetLeverage(user, as.Name, a.Leverage); err != nil {
			errAnswer(w, "Invalid leverage value.")
			return
		}
		okAnswer(w, "default", nil)
	case *hl.NoopAction:
		okAnswer(w, "default", nil)
	case *hl.ModifyAction:
		if msg := s.modify(user, a); msg != "" {
			errAnswer(w, msg)
			return
		}
		okAnswer(w, "default", nil)
	case *hl.ScheduleCancelAction:
		if msg := s.scheduleCancel(user, a); msg != "" {
			errAnswer(w, msg)
			return
		}
		okAnswer(w, "default", nil)
	}
}

// spend charges an action to its user's address budget: n for a batch of
// n orders or cancels, else 1; cancels have their own, larger budget. Once
// a budget is used up, one action per 10 s still passes (fact sheet §10;
// the message is the one third-party catalogs quote, its numbers
// UNCONFIRMED).
func (s *Sim) spend(user string, action any) string {
	n, class, capacity := 1, "actions", s.reqCap
	switch a := action.(type) {
	case *hl.OrderAction:
		n = len(a.Orders)
	case *hl.CancelAction:
		n, class, capacity = len(a.Cancels), "cancels", min(s.reqCap+100000, 2*s.reqCap)
	case *hl.CancelByCloidAction:
		n, class, capacity = len(a.Cancels), "cancels", min(s.reqCap+100000, 2*s.reqCap)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.budgets[user+"/"+class]
	if b == nil {
		b = &budget{}
		s.budgets[user+"/"+class] = b
	}
	if b.used+n > capacity {
		if now.Sub(b.paced) < 10*time.Second {
			return fmt.Sprintf("Too many cumulative requests sent (%d > %d) for cumulative volume traded $0. Place taker orders to free up 1 request per USDC traded.", b.used+n, capacity)
		}
		b.paced = now
	}
	b.used += n
	if b.used >= capacity && b.paced.IsZero() {
		b.paced = now
	}
	return ""
}

// normalize rewrites p, s and triggerPx without trailing zeros before
// hashing: a client that signed "100.0" but the venue hashes "100" gets
// the wrong signer back, which is how the docs' "trailing zeros" signing
// error shows (fact sheet §4.5).
func normalize(action any) {
	var orders []hl.OrderWire
	switch a := action.(type) {
	case *hl.OrderAction:
		orders = a.Orders
	case *hl.ModifyAction:
		orders = []hl.OrderWire{a.Order}
		defer func() { a.Order = orders[0] }()
	default:
		return
	}
	strip := func(s string) string {
		if strings.Contains(s, ".") && !strings.ContainsAny(s, "eE") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	for i := range orders {
		o := &orders[i]
		o.Price, o.Size = strip(o.Price), strip(o.Size)
		if o.Type.Trigger != nil {
			o.Type.Trigger.TriggerPx = strip(o.Type.Trigger.TriggerPx)
		}
	}
}

// authenticate recovers the signer for each network and accepts an agent
// approved on that network or an account's own key. It returns the signer,
// the account it acts for, or the venue's error message.
func (s *Sim) authenticate(h [32]byte, sig hl.Signature) (signer, master string, mainnet bool, msg string) {
	first := ""
	for _, main := range []bool{true, false} {
		addr, err := hl.RecoverL1(h, main, sig)
		if err != nil {
			continue
		}
		if first == "" {
			first = addr
		}
		s.mu.Lock()
		ag, isAgent := s.agents[agentKey(addr, main)]
		isUser := s.users[addr]
		s.mu.Unlock()
		if isAgent {
			return addr, ag.master, main, ""
		}
		if isUser {
			return addr, addr, main, ""
		}
	}
	if first == "" {
		return "", "", false, "Invalid signature."
	}
	return "", "", false, "User or API Wallet " + first + " does not exist."
}

// checkNonce applies the venue's nonce rules per signer (fact sheet §4.4;
// the exact messages are UNCONFIRMED).
func (s *Sim) checkNonce(signer string, mainnet bool, nonce uint64, expiresAfter *uint64) string {
	key := agentKey(signer, mainnet) // the networks are separate chains
	now := s.now()
	if nonce < uint64(now.Add(-48*time.Hour).UnixMilli()) || nonce > uint64(now.Add(24*time.Hour).UnixMilli()) {
		return fmt.Sprintf("Invalid nonce: %d is outside the allowed window around the block time.", nonce)
	}
	if expiresAfter != nil && *expiresAfter < uint64(now.UnixMilli()) {
		return "Action expired."
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.nonces[key]
	for _, n := range kept {
		if n == nonce {
			return fmt.Sprintf("Invalid nonce: duplicate nonce %d.", nonce)
		}
	}
	if len(kept) >= maxNonces && nonce < kept[0] {
		return fmt.Sprintf("Invalid nonce: %d is lower than all %d stored nonces.", nonce, maxNonces)
	}
	i := 0
	for i < len(kept) && kept[i] < nonce {
		i++
	}
	kept = append(kept[:i], append([]uint64{nonce}, kept[i:]...)...)
	if len(kept) > maxNonces {
		kept = kept[1:]
	}
	s.nonces[key] = kept
	if s.signers[signer] == nil {
		s.signers[signer] = map[uint64]struct{}{}
	}
	s.signers[signer][nonce] = struct{}{}
	return ""
}

func orderError(msg string) map[string]any { return map[string]any{"error": msg} }

// orders places each order of an action on its own; statuses by index.
func (s *Sim) orders(user string, a *hl.OrderAction) []any {
	s.mu.Lock()
	s.received = append(s.received, a.Orders...)
	s.mu.Unlock()
	out := make([]any, len(a.Orders))
	for i, o := range a.Orders {
		out[i] = s.placeOne(user, o, a.Grouping == "positionTpsl")
	}
	return out
}

// validNumber checks the venue's number rules: sizes within szDecimals,
// prices within 5 significant figures (integers exempt) and 6 − szDecimals
// decimals.
func validPrice(px decimal.Decimal, szDecimals int) bool {
	if !px.IsPositive() {
		return false
	}
	decimals := max(0, -int(px.Exponent()))
	if decimals > max(0, 6-szDecimals) {
		return false
	}
	if decimals == 0 {
		return true
	}
	digits := strings.TrimLeft(px.Coefficient().String(), "0")
	return len(digits) <= 5
}

func (s *Sim) placeOne(user string, o hl.OrderWire, positionTpsl bool) any {
	as, ok := s.asset(o.Asset)
	if !ok {
		return orderError(fmt.Sprintf("Invalid asset %d.", o.Asset))
	}
	suffix := fmt.Sprintf(" asset=%d", o.Asset)
	size, err1 := decimal.NewFromString(o.Size)
	px, err2 := decimal.NewFromString(o.Price)
	switch {
	case err1 != nil || size.IsNegative() || -size.Exponent() > int32(as.SzDecimals):
		return orderError("Order has invalid size." + suffix)
	case size.IsZero():
		return orderError("Order has zero size." + suffix)
	case err2 != nil || !validPrice(px.Truncate(12), as.SzDecimals):
		return orderError("Price must be divisible by tick size." + suffix)
	}
	side := paper.Sell
	if o.IsBuy {
		side = paper.Buy
	}
	// Position TP/SL belong to the position: the venue cancels the sibling
	// when one fires and both when the position closes
	// (https://hyperliquid.gitbook.io/hyperliquid-docs/trading/take-profit-and-stop-loss-orders-tp-sl).
	// The cloid rides on the paper order, so its events carry it.
	req := paper.OrderRequest{Market: as.Name, Side: side, Size: size, Price: px, ReduceOnly: o.ReduceOnly, PositionLinked: positionTpsl,
		ClientOrderID: strings.ToLower(o.Cloid)}
	ex := orderExtra{limitPx: num(px), cloid: strings.ToLower(o.Cloid), positionTpsl: positionTpsl, asset: o.Asset}
	ioc := false
	switch {
	case o.Type.Limit != nil && o.Type.Trigger == nil:
		req.Type = paper.Limit
		ex.tif = o.Type.Limit.TIF
		switch o.Type.Limit.TIF {
		case "Gtc":
		case "Alo":
			req.PostOnly = true
		case "Ioc":
			ioc = true
		default:
			return orderError("Invalid TIF." + suffix)
		}
	case o.Type.Trigger != nil && o.Type.Limit == nil:
		t := o.Type.Trigger
		trig, err := decimal.NewFromString(t.TriggerPx)
		if err != nil || !validPrice(trig, as.SzDecimals) {
			return orderError("Price must be divisible by tick size." + suffix)
		}
		req.TriggerPrice, req.Price = trig, decimal.Zero
		ex.tpsl = t.Tpsl
		switch t.Tpsl {
		case "sl":
			req.Type = paper.StopMarket
		case "tp":
			req.Type = paper.TakeProfitMarket
		default:
			return orderError("Invalid TP/SL price." + suffix)
		}
		if positionTpsl && s.wouldTrigger(as.Name, side, t.Tpsl, trig) {
			return orderError("Invalid TP/SL price." + suffix)
		}
	default:
		return orderError("Order has invalid type." + suffix)
	}
	if ioc {
		book, err := s.eng.Orderbook(as.Name, 1)
		if err != nil || len(book.Bids) == 0 || len(book.Asks) == 0 ||
			(o.IsBuy && px.LessThan(book.Asks[0].Price)) || (!o.IsBuy && px.GreaterThan(book.Bids[0].Price)) {
			return orderError("Order could not immediately match against any resting orders." + suffix)
		}
	}
	placed, err := s.eng.PlaceOrder(user, req)
	if err != nil {
		return orderError(s.venueMessage(as.Name, err) + suffix)
	}
	if ioc && placed.Status == paper.Open { // the rest of an IOC is cancelled
		if c, err := s.eng.CancelOrder(user, placed.ID); err == nil {
			placed = c
		}
	}
	s.mu.Lock()
	s.extra[placed.ID] = ex
	if ex.cloid != "" {
		if s.cloids[user] == nil {
			s.cloids[user] = map[string]string{}
		}
		s.cloids[user][ex.cloid] = placed.ID
	}
	s.mu.Unlock()
	oid, _ := strconv.ParseUint(placed.ID, 10, 64)
	withCloid := func(m map[string]any) map[string]any {
		if ex.cloid != "" {
			m["cloid"] = ex.cloid
		}
		return m
	}
	if placed.FilledSize.IsPositive() && placed.Status != paper.Open {
		return map[string]any{"filled": withCloid(map[string]any{"totalSz": num(placed.FilledSize), "avgPx": num(placed.AvgFillPrice), "oid": oid})}
	}
	if ioc {
		return orderError("Order could not immediately match against any resting orders." + suffix)
	}
	if positionTpsl && req.TriggerPrice.IsPositive() {
		// Position TP/SL legs are acknowledged with the bare string
		// "waitingForTrigger" and no oid (the Python SDK's order statuses;
		// github.com/MetaMask/core/pull/9995, github.com/nktkas/hyperliquid/pull/96).
		return "waitingForTrigger"
	}
	return map[string]any{"resting": withCloid(map[string]any{"oid": oid})}
}

// wouldTrigger reports a TP/SL already on the wrong side of mark.
func (s *Sim) wouldTrigger(coin string, side paper.Side, tpsl string, trig decimal.Decimal) bool {
	p, err := s.eng.MarkPrice(coin)
	if err != nil {
		return false
	}
	sellsBelow := (tpsl == "sl") == (side == paper.Sell)
	if sellsBelow {
		return p.Mark.LessThanOrEqual(trig)
	}
	return p.Mark.GreaterThanOrEqual(trig)
}

// venueMessage renders a paper engine error as Hyperliquid's message.
func (s *Sim) venueMessage(coin string, err error) string {
	switch {
	case errors.Is(err, paper.ErrInsufficientMargin):
		return "Insufficient margin to place order."
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		bid, ask := "0", "0"
		if b, err := s.eng.Orderbook(coin, 1); err == nil && len(b.Bids) > 0 && len(b.Asks) > 0 {
			bid, ask = num(b.Bids[0].Price), num(b.Asks[0].Price)
		}
		return "Post only order would have immediately matched, bbo was " + bid + "@" + ask + "."
	case errors.Is(err, paper.ErrReduceOnly):
		return "Reduce only order would increase position."
	case errors.Is(err, paper.ErrInvalidOrder) && strings.Contains(err.Error(), "notional"):
		return "Order must have minimum value of $10."
	case errors.Is(err, paper.ErrInvalidOrder) && strings.Contains(err.Error(), "book levels"):
		return "No liquidity available for market order."
	case errors.Is(err, paper.ErrInvalidOrder):
		return "Order has invalid size."
	}
	return "Order rejected: " + err.Error()
}

// cancel cancels one live order of user on the asset.
func (s *Sim) cancel(user string, assetIdx int, id string) any {
	notFound := orderError("Order was never placed, already canceled, or filled.")
	as, ok := s.asset(assetIdx)
	if !ok || id == "" {
		return notFound
	}
	o, err := s.eng.Order(user, id)
	if err != nil || o.Market != as.Name {
		return notFound
	}
	if _, err := s.eng.CancelOrder(user, id); err != nil {
		return notFound
	}
	return "success"
}
