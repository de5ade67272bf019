package edge

import (
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
)

// sseSessions are the open MCP SSE sessions (DESIGN §13). A GET needs a
// key and opens a session bound to it, at most the key's tier's
// MaxStreams at once. Messages are POSTed to the session URL the server
// gave, which carries only the session id: a POST without a key is
// accepted (the id is unguessable), one with another key is refused. A
// session no message reached for cfg.MCPSessionIdle closes.
type sseSessions struct {
	srv *Server

	mu     sync.Mutex
	byID   map[string]*sseSession
	perKey map[string]int // open sessions by key id
}

type sseSession struct {
	rawKey    string
	transport *mcp.SSEServerTransport
	idle      *time.Timer // closes the session when it fires
}

func newSSESessions(s *Server) *sseSessions {
	return &sseSessions{srv: s, byID: map[string]*sseSession{}, perKey: map[string]int{}}
}

const sseMissingKey = "no API key: pass it in the api_key query parameter (/mcp/sse?api_key=<key>) or the X-API-Key header"

// serve is the /mcp/sse route.
func (h *sseSessions) serve(c echo.Context) error {
	r := c.Request()
	if rebinding(r) {
		return h.srv.fail(c, contract.Errorf(contract.CodeInvalidRequest,
			"Host %q is not a loopback name though the request came to a loopback address", r.Host))
	}
	switch r.Method {
	case http.MethodGet:
		return h.open(c)
	case http.MethodPost:
		return h.message(c)
	}
	return h.srv.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "/mcp/sse takes GET (open a session) and POST (a message to it)"))
}

// open authenticates a GET and holds the session open until the client
// leaves, the session idles out or the server shuts down.
func (h *sseSessions) open(c echo.Context) error {
	r := c.Request()
	rawKey := sseKey(r)
	key, ce := h.srv.authorizeMCP(r.Context(), rawKey)
	if ce != nil {
		if ce.Code == contract.CodeMissingAPIKey {
			ce = contract.Errorf(contract.CodeMissingAPIKey, "%s", sseMissingKey)
		}
		return h.srv.fail(c, ce)
	}
	logOf(c).keyPrefix = key.Display
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	id := rand.Text()
	endpoint, _ := r.URL.Parse("?sessionid=" + id) // drops api_key: the URL is the client's to log
	w := c.Response()
	sess := &sseSession{rawKey: rawKey, idle: time.AfterFunc(h.srv.cfg.MCPSessionIdle, cancel),
		transport: &mcp.SSEServerTransport{Endpoint: endpoint.RequestURI(), Response: w, MaxRequestBodyBytes: MaxBody}}
	defer sess.idle.Stop()
	if ce := h.add(id, key, sess); ce != nil {
		return h.srv.fail(c, ce)
	}
	defer h.remove(id, key.ID)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	ss, err := h.srv.newMCPServer(func(*mcp.RequestExtra) string { return rawKey }).Connect(ctx, sess.transport, nil)
	if err != nil {
		return h.srv.fail(c, h.srv.internal(ctx, "open MCP SSE session", err))
	}
	defer ss.Close()
	go func() { _ = ss.Wait(); cancel() }()
	<-ctx.Done()
	return nil
}

// add registers a session unless its key has its tier's cap open.
func (h *sseSessions) add(id string, key contract.KeyInfo, sess *sseSession) *contract.Error {
	limit := key.Tier.Limits().MaxStreams
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perKey[key.ID] >= limit {
		return contract.Errorf(contract.CodeRateLimited,
			"this key has %d MCP SSE sessions open, the cap of the %s tier; close one (sessions idle for %s close themselves)",
			limit, key.Tier, h.srv.cfg.MCPSessionIdle)
	}
	h.perKey[key.ID]++
	h.byID[id] = sess
	return nil
}

func (h *sseSessions) remove(id, keyID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byID, id)
	if h.perKey[keyID]--; h.perKey[keyID] <= 0 {
		delete(h.perKey, keyID)
	}
}

// message hands a POST to its session; a key it carries must be the
// session's own.
func (h *sseSessions) message(c echo.Context) error {
	r := c.Request()
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		return h.srv.fail(c, contract.Errorf(contract.CodeInvalidRequest,
			"POST /mcp/sse needs the sessionid of an open session: post to the endpoint URL the session's GET announced"))
	}
	h.mu.Lock()
	sess := h.byID[id]
	h.mu.Unlock()
	if sess == nil {
		return h.srv.fail(c, contract.Errorf(contract.CodeNotFound,
			"no open MCP SSE session %q: it closed or idled out (after %s); open a new one with GET /mcp/sse",
			id, h.srv.cfg.MCPSessionIdle))
	}
	if k := sseKey(r); k != "" && k != sess.rawKey {
		return h.srv.fail(c, contract.Errorf(contract.CodeInvalidAPIKey,
			"this MCP SSE session was opened with another API key: post to it with that key or with none"))
	}
	sess.idle.Reset(h.srv.cfg.MCPSessionIdle)
	sess.transport.ServeHTTP(c.Response(), r)
	return nil
}

// rebinding reports a request that reached a loopback address under a
// name that is not loopback: a web page's DNS rebinding attack on a local
// gateway (the go-sdk's SSE handler refuses it too).
func rebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && IsLoopbackHost(local.String()) && !IsLoopbackHost(r.Host)
}

// IsLoopbackHost reports whether host (or host:port) names this machine
// only: localhost or a loopback IP.
func IsLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
