// Package sim simulates Hyperliquid's wire API (POST /info and POST
// /exchange: request types, actions, answer and error shapes, signature
// checks) on the paper engine, for tests of the Hyperliquid connector.
//
// Every /exchange action is re-serialized from its decoded fields (as the
// venue hashes its own re-serialization), hashed, and its signer recovered
// for mainnet (source "a") and testnet (source "b"). The action runs only
// when the signer is an agent approved for that network (ApproveAgent) or
// an account's own key (AddUser); otherwise the answer is the venue's
// {"status":"err","response":"User or API Wallet 0x… does not exist."}.
// Nonces are checked per signer like the venue's: unique among the 20
// highest, within (now − 2 d, now + 1 d).
package sim

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/shopspring/decimal"
)

// Asset is one perp of the simulated universe.
type Asset struct {
	Name        string // coin, e.g. BTC or kPEPE
	SzDecimals  int
	MaxLeverage int
	StartPrice  decimal.Decimal
}

// DefaultAssets are BTC, ETH and kPEPE (the 1000× PEPE listing), in that
// order (asset ids 0, 1, 2).
func DefaultAssets() []Asset {
	return []Asset{
		{Name: "BTC", SzDecimals: 5, MaxLeverage: 40, StartPrice: decimal.RequireFromString("60000")},
		{Name: "ETH", SzDecimals: 4, MaxLeverage: 25, StartPrice: decimal.RequireFromString("3000")},
		{Name: "kPEPE", SzDecimals: 0, MaxLeverage: 10, StartPrice: decimal.RequireFromString("0.012")},
	}
}

// Config configures a Sim; zero fields take defaults.
type Config struct {
	Seed   int64
	Now    func() time.Time // default time.Now
	Assets []Asset          // default DefaultAssets()
	// RequestCap is each address's action budget (default 10 000, the
	// venue's initial buffer; the sim earns nothing from volume). Cancels
	// get min(cap + 100 000, 2 × cap). Past it an address may send one
	// action every 10 s.
	RequestCap int
	// PageCap caps every history page the sim answers (userFunding), so
	// tests can make the connector page; 0: the documented 500.
	PageCap int
}

// Action is one /exchange action the simulator accepted: who signed it,
// for which user and network, and the decoded action (*hl.OrderAction,
// *hl.CancelAction, *hl.CancelByCloidAction, *hl.UpdateLeverageAction or
// *hl.NoopAction).
type Action struct {
	Signer  string
	User    string // the account or vault acted for
	Mainnet bool
	Nonce   uint64
	Action  any
}

// Sim is a simulated Hyperliquid. It is safe for concurrent use.
type Sim struct {
	eng    *paper.Engine
	now    func() time.Time
	assets []Asset
	ws     simkit.Sockets[*websocket.Conn] // websockets (stream.go)
	feed   feed                            // account subscriptions (account.go)

	mu        sync.Mutex
	users     map[string]bool
	agents    map[string]agent               // agentKey → master
	vaults    map[string]string              // vault → leader
	nonces    map[string][]uint64            // signer → highest nonces, ascending
	cloids    map[string]map[string]string   // user → cloid → paper order id
	extra     map[string]orderExtra          // paper order id → wire details
	received  []hl.OrderWire                 // every order wire of accepted actions
	actions   []Action                       // every accepted action
	signers   map[string]map[uint64]struct{} // for tests: nonces accepted per signer
	budgets   map[string]*budget             // per user address and class
	reqCap    int
	pageCap   int
	deadman   map[string]*scheduled // user → scheduleCancel (amend.go)
	requests  atomic.Int64          // requests received on both paths, for tests
	infoTypes map[string]int        // /info requests by type, for tests
	actionRq  atomic.Int64          // requests received on /exchange
}

// budget is one address's use of one allowance (actions or cancels).
type budget struct {
	used int
	// paced is when the allowance ran out, then when the last action
	// passed at the throttled pace of one per 10 s.
	paced time.Time
}

type agent struct {
	master string
}

// agentKey keys agents and nonces by address and network: agents are
// approved per chain, and each chain keeps its own nonces.
func agentKey(addr string, mainnet bool) string {
	if mainnet {
		return addr + "/mainnet"
	}
	return addr + "/testnet"
}

type orderExtra struct {
	limitPx      string
	tif          string
	cloid        string
	tpsl         string
	positionTpsl bool
	asset        int
}

// New returns a simulator whose paper engine pays funding hourly, like
// Hyperliquid.
func New(cfg Config) *Sim {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Assets) == 0 {
		cfg.Assets = DefaultAssets()
	}
	specs := make([]paper.MarketSpec, len(cfg.Assets))
	for i, a := range cfg.Assets {
		specs[i] = paper.MarketSpec{
			Symbol:      a.Name,
			Base:        a.Name,
			Quote:       "USD",
			StartPrice:  a.StartPrice,
			TickSize:    decimal.New(1, -int32(max(0, 6-a.SzDecimals))),
			LotSize:     decimal.New(1, -int32(a.SzDecimals)),
			MinNotional: decimal.NewFromInt(10),
			MaxLeverage: a.MaxLeverage,
		}
	}
	eng := paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: specs, FundingInterval: time.Hour,
		MakerFeeBps: decimal.RequireFromString("1.5"), TakerFeeBps: decimal.RequireFromString("4.5")})
	if cfg.RequestCap <= 0 {
		cfg.RequestCap = 10000
	}
	s := &Sim{eng: eng, now: cfg.Now, assets: cfg.Assets,
		users: map[string]bool{}, agents: map[string]agent{}, vaults: map[string]string{},
		nonces: map[string][]uint64{}, cloids: map[string]map[string]string{}, extra: map[string]orderExtra{},
		signers: map[string]map[uint64]struct{}{}, budgets: map[string]*budget{}, reqCap: cfg.RequestCap,
		pageCap: cfg.PageCap, infoTypes: map[string]int{}, feed: feed{wake: make(chan struct{}, 1), clients: map[*wsClient]bool{}}}
	eng.OnEvent(s.sink)
	go s.dispatch()
	return s
}

// Engine exposes the paper engine, so tests can move prices.
func (s *Sim) Engine() *paper.Engine { return s.eng }

// AddUser creates a funded account; its own key may sign for it.
func (s *Sim) AddUser(address string, balance decimal.Decimal) error {
	address = strings.ToLower(address)
	if _, err := s.eng.EnsureAccount(address, balance); err != nil {
		return err
	}
	s.mu.Lock()
	s.users[address] = true
	s.mu.Unlock()
	return nil
}

// ApproveAgent approves agent to trade for master on one network, as the
// master's approveAgent action would (agents are per chain).
func (s *Sim) ApproveAgent(master, agentAddress string, mainnet bool) {
	s.mu.Lock()
	s.agents[agentKey(strings.ToLower(agentAddress), mainnet)] = agent{master: strings.ToLower(master)}
	s.mu.Unlock()
}

// AddVault creates a funded vault (or sub-account) that leader's agents
// may trade with vaultAddress.
func (s *Sim) AddVault(vault, leader string, balance decimal.Decimal) error {
	vault = strings.ToLower(vault)
	if _, err := s.eng.EnsureAccount(vault, balance); err != nil {
		return err
	}
	s.mu.Lock()
	s.vaults[vault] = strings.ToLower(leader)
	s.mu.Unlock()
	return nil
}

// ReceivedOrders returns every order wire of the actions the simulator
// accepted, in arrival order.
func (s *Sim) ReceivedOrders() []hl.OrderWire {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hl.OrderWire(nil), s.received...)
}

// Actions returns every /exchange action the simulator accepted, in
// arrival order.
func (s *Sim) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Action(nil), s.actions...)
}

// Requests counts the HTTP requests the simulator received (both paths,
// accepted or not).
func (s *Sim) Requests() int64 { return s.requests.Load() }

// InfoRequests counts the /info requests of these types received so far.
func (s *Sim) InfoRequests(types ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range types {
		n += s.infoTypes[t]
	}
	return n
}

// ExchangeRequests counts the /exchange requests the simulator received,
// accepted or not.
func (s *Sim) ExchangeRequests() int64 { return s.actionRq.Load() }

// AcceptedNonces returns the nonces accepted from signer, ascending.
func (s *Sim) AcceptedNonces(signer string) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]uint64, 0, len(s.signers[strings.ToLower(signer)]))
	for n := range s.signers[strings.ToLower(signer)] {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Handler serves POST /info and POST /exchange.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/info", s.serveInfo)
	mux.HandleFunc("/exchange", s.serveExchange)
	mux.HandleFunc("GET /ws", s.serveWS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path == "/exchange" {
			s.actionRq.Add(1)
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// deserializeError is the venue's answer to a body that does not fit the
// request type (HTTP 422; wording from a third-party catalog).
func deserializeError(w http.ResponseWriter, detail string) {
	http.Error(w, "Failed to deserialize the JSON body into the target type: "+detail, http.StatusUnprocessableEntity)
}

func (s *Sim) asset(i int) (Asset, bool) {
	if i < 0 || i >= len(s.assets) {
		return Asset{}, false
	}
	return s.assets[i], true
}

func (s *Sim) assetByName(coin string) (int, Asset, bool) {
	for i, a := range s.assets {
		if a.Name == coin {
			return i, a, true
		}
	}
	return 0, Asset{}, false
}

// num formats a decimal as the venue does: plain, no trailing zeros.
func num(d decimal.Decimal) string {
	if d.IsZero() {
		return "0"
	}
	return d.String()
}
