package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
)

// The MCP front end (SPEC §4, DESIGN §10): the 20 operations as tools, over
// the official go-sdk's stateless streamable HTTP transport at /mcp and its
// SSE transport at /mcp/sse. A tool call runs the same pipeline as POST /v1:
// authentication, tier, rate limit, scope, credential, validation, routing.

// mcpMinTier is the tier MCP access needs (SPEC §5 tiers table).
const mcpMinTier = contract.TierBuilder

// keySource tells a tool handler which API key the call came with.
type keySource func(req *mcp.CallToolRequest) string

// newMCPServer builds an MCP server whose tools are generated from the
// operation table.
func (s *Server) newMCPServer(keyOf keySource) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{
		Name:    "perpgate",
		Title:   "perpgate trading gateway",
		Version: contract.APIVersion,
	}, &mcp.ServerOptions{
		Instructions: "Trade perpetual futures on the exchange of the credential you pass as credentialId. " +
			"Sizes are in base-asset units, prices in quote currency, decimals as strings. " +
			"Tools that place or cancel orders act on real money when the credential is on mainnet.",
	})
	for _, op := range contract.Operations {
		srv.AddTool(toolOf(op), s.toolHandler(op, keyOf))
	}
	return srv
}

func toolOf(op *contract.Operation) *mcp.Tool {
	destructive := !op.ReadOnly
	openWorld := true
	return &mcp.Tool{
		Name:         op.Tool,
		Title:        op.Name,
		Description:  op.Summary + " " + toolTierNote(op),
		InputSchema:  op.InputSchema(),
		OutputSchema: op.OutputSchema(),
		Annotations: &mcp.ToolAnnotations{
			Title:           op.Name,
			ReadOnlyHint:    op.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  op.ReadOnly,
			OpenWorldHint:   &openWorld,
		},
	}
}

func toolTierNote(op *contract.Operation) string {
	return "Needs credentialId (a UUID from the gateway operator). Operation " + op.Name + ", minimum tier " + string(op.MinTier) + "."
}

// toolHandler runs one tool call through the /v1 pipeline and returns the
// result as structured content plus a JSON text block; a gateway error is a
// tool error carrying the same code and message.
func (s *Server) toolHandler(op *contract.Operation, keyOf keySource) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
		rid := uuid.NewString()
		result, ce := s.callTool(ctx, rid, keyOf(req), op, req.Params.Arguments)
		s.log.Info("tool call done", "request_id", rid, "operation", op.Name, "code", codeOf(ce))
		if ce != nil {
			return toolError(ce), nil
		}
		var structured map[string]any
		if err := json.Unmarshal(result, &structured); err != nil {
			return toolError(s.internal(ctx, "decode tool result", err)), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(result)}},
			StructuredContent: structured,
		}, nil
	}
}

func codeOf(ce *contract.Error) string {
	if ce == nil {
		return "OK"
	}
	return string(ce.Code)
}

func (s *Server) callTool(ctx context.Context, rid, rawKey string, op *contract.Operation, args any) (json.RawMessage, *contract.Error) {
	key, ce := s.authorizeMCP(ctx, rawKey)
	if ce != nil {
		return nil, ce
	}
	if ce := s.rateLimit(ctx, http.Header{}, key); ce != nil {
		return nil, ce
	}
	fields := map[string]json.RawMessage{}
	if raw, ok := args.(json.RawMessage); ok && len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, contract.Errorf(contract.CodeInvalidJSON, "tool arguments must be a JSON object")
		}
	}
	result, _, ce := s.execute(ctx, rid, key, op, fields)
	return result, ce
}

// authorizeMCP is authentication plus the MCP tier rule.
func (s *Server) authorizeMCP(ctx context.Context, rawKey string) (contract.KeyInfo, *contract.Error) {
	key, ce := s.authenticate(ctx, rawKey)
	if ce != nil {
		return key, ce
	}
	if !key.Tier.AtLeast(mcpMinTier) {
		return key, contract.Errorf(contract.CodeTierInsufficient,
			"MCP access needs the %s tier or above; this key's account is on %s", mcpMinTier, key.Tier)
	}
	return key, nil
}

func toolError(ce *contract.Error) *mcp.CallToolResult {
	body, _ := json.Marshal(envelope{Error: ce})
	var structured map[string]any
	_ = json.Unmarshal(body, &structured)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: structured,
	}
}

// mountMCP adds /mcp (stateless streamable HTTP, JSON responses) and
// /mcp/sse (SSE, key in the api_key query parameter). Both refuse a bad
// key or a free-tier key with the /v1 error envelope before any MCP
// message is read; tool calls check the key again, so a revocation stops
// an open session at its next call.
func (s *Server) mountMCP(e *echo.Echo) {
	shared := s.newMCPServer(func(req *mcp.CallToolRequest) string {
		if req.Extra == nil {
			return ""
		}
		return apiKeyOf(&http.Request{Header: req.Extra.Header})
	})
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: MaxBody})
	sse := mcp.NewSSEHandler(func(r *http.Request) *mcp.Server {
		// Each SSE session gets a server bound to the key it was opened with:
		// its messages arrive on a session URL that no longer carries the key.
		key := sseKey(r)
		return s.newMCPServer(func(*mcp.CallToolRequest) string { return key })
	}, &mcp.SSEOptions{MaxRequestBodyBytes: MaxBody})

	e.Any("/mcp", s.mcpGate(streamable, apiKeyOf))
	e.Any("/mcp/sse", s.mcpGate(sse, func(r *http.Request) string {
		if r.URL.Query().Get("sessionid") != "" {
			return "" // an established session: its key was checked when it opened
		}
		return sseKey(r)
	}))
}

func sseKey(r *http.Request) string {
	if k := strings.TrimSpace(r.URL.Query().Get("api_key")); k != "" {
		return k
	}
	return apiKeyOf(r)
}

// mcpGate authenticates the HTTP request (when keyOf yields something to
// check) before handing it to the MCP transport.
func (s *Server) mcpGate(h http.Handler, keyOf func(*http.Request) string) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		sessionMessage := r.URL.Path == "/mcp/sse" && r.URL.Query().Get("sessionid") != ""
		if !sessionMessage {
			key, ce := s.authorizeMCP(r.Context(), keyOf(r))
			if ce != nil {
				return s.fail(c, ce)
			}
			c.Set(ctxKey, key.Display)
		}
		h.ServeHTTP(c.Response(), r)
		return nil
	}
}
