package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// The MCP front end (SPEC §4, DESIGN §10): the 20 operations as tools, over
// the official go-sdk's stateless streamable HTTP transport at /mcp and its
// SSE transport at /mcp/sse. A tool call runs the same pipeline as POST /v1:
// authentication, tier, rate limit, scope, credential, validation, routing.

// mcpMinTier is the tier MCP access needs (SPEC §5 tiers table).
const mcpMinTier = contract.TierBuilder

// keySource tells a tool or resource handler which API key the call came
// with, from the request's extra (its HTTP header; nil without one).
type keySource func(extra *mcp.RequestExtra) string

// newMCPServer builds an MCP server whose tools are generated from the
// operation table.
func (s *Server) newMCPServer(keyOf keySource) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{
		Name:    "perpgate",
		Title:   "perpgate trading gateway",
		Version: contract.APIVersion,
	}, &mcp.ServerOptions{
		Instructions: "Trade perpetual futures on the exchange of the credential you pass as credentialId; " +
			"list_credentials lists the credentials this key may use. " +
			"Sizes are in base-asset units, prices in quote currency, decimals as strings. " +
			"Tools that place or cancel orders act on real money when the credential is on mainnet.",
	})
	for _, op := range contract.Operations {
		srv.AddTool(toolOf(op), s.toolHandler(op, keyOf))
	}
	s.addCapabilitiesResource(srv, keyOf)
	return srv
}

// toolOf is the MCP tool of one operation. Annotations: read-only
// operations are read-only and idempotent; every other one is destructive
// (it changes orders, positions or settings on the exchange), and the order
// management ones are idempotent too: repeating a cancel, close or leverage
// change with the same arguments changes nothing more. Placements are not.
func toolOf(op *contract.Operation) *mcp.Tool {
	destructive := !op.ReadOnly
	openWorld := true
	return &mcp.Tool{
		Name:         op.Tool,
		Title:        toolTitle(op),
		Description:  op.Summary + " " + toolArgsNote(op),
		InputSchema:  op.InputSchema(),
		OutputSchema: op.OutputSchema(),
		Annotations: &mcp.ToolAnnotations{
			Title:           toolTitle(op),
			ReadOnlyHint:    op.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  op.ReadOnly || op.Group == contract.GroupManage,
			OpenWorldHint:   &openWorld,
		},
	}
}

// toolTitle turns place_limit_order into "Place limit order".
func toolTitle(op *contract.Operation) string {
	t := strings.ReplaceAll(op.Tool, "_", " ")
	return strings.ToUpper(t[:1]) + t[1:]
}

func toolArgsNote(op *contract.Operation) string {
	if op.Keyless {
		return "Takes no credentialId; this is the " + op.Name + " operation of POST /v1."
	}
	if op.ByExchange {
		return "Pass credentialId, the UUID of an exchange credential, or exchange alone (no credential needed); this is the " +
			op.Name + " operation of POST /v1."
	}
	return "Every call needs credentialId, the UUID of the exchange credential to act with; this is the " +
		op.Name + " operation of POST /v1."
}

// toolHandler runs one tool call through the /v1 pipeline and returns the
// result as structured content plus a JSON text block; a gateway error is a
// tool error carrying the same code and message.
func (s *Server) toolHandler(op *contract.Operation, keyOf keySource) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := bus.WithDeadline(ctx, time.Now().Add(s.cfg.RequestTimeout))
		defer cancel()
		rid := uuid.NewString()
		ctx = telemetry.WithRequestID(ctx, rid)
		result, ce := s.callTool(ctx, rid, keyOf(req.Extra), op, req.Params.Arguments)
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
	result, ce := s.authorizedTool(ctx, rid, key, op, args)
	s.countUsage(key.ID, op.Name, ce)
	return result, ce
}

func (s *Server) authorizedTool(ctx context.Context, rid string, key contract.KeyInfo, op *contract.Operation, args any) (json.RawMessage, *contract.Error) {
	if ce := s.rateLimit(ctx, http.Header{}, key); ce != nil {
		return nil, ce
	}
	fields := map[string]json.RawMessage{}
	if raw, ok := args.(json.RawMessage); ok && len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, contract.Errorf(contract.CodeInvalidJSON, "tool arguments must be a JSON object")
		}
	}
	result, _, ce := s.executeAudited(ctx, "mcp", rid, key, op, fields)
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

// toolError is a gateway error as a tool error: the /v1 error envelope as
// the JSON text block. It carries no structured content, because clients
// check structured content against the tool's output schema, which
// describes the success result.
func toolError(ce *contract.Error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(envelopeJSON(ce))}},
	}
}

// mountMCP adds /mcp (stateless streamable HTTP, JSON responses) and
// /mcp/sse (SSE, key in the api_key query parameter; see sseSessions).
// Both refuse a bad key or a free-tier key with the /v1 error envelope
// before any MCP message is read; tool calls check the key again, so a
// revocation stops an open session at its next call.
func (s *Server) mountMCP(e *echo.Echo) {
	shared := s.newMCPServer(func(extra *mcp.RequestExtra) string {
		if extra == nil {
			return ""
		}
		return apiKeyOf(&http.Request{Header: extra.Header})
	})
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: MaxBody})
	e.Any("/mcp", s.mcpGate(streamable))
	e.Any("/mcp/sse", newSSESessions(s).serve)
}

func sseKey(r *http.Request) string {
	if k := strings.TrimSpace(r.URL.Query().Get("api_key")); k != "" {
		return k
	}
	return apiKeyOf(r)
}

// mcpGate authenticates the HTTP request before handing it to the MCP
// transport, refusing a bad or free-tier key with the /v1 error envelope.
func (s *Server) mcpGate(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		key, ce := s.authorizeMCP(r.Context(), apiKeyOf(r))
		if ce != nil {
			return s.fail(c, ce)
		}
		logOf(c).keyPrefix = key.Display
		h.ServeHTTP(c.Response(), r)
		return nil
	}
}
