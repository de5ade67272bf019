package edge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// capabilitiesURI is the MCP resource template of getCapabilities by
// exchange (DESIGN §13).
const (
	capabilitiesPrefix = "perpgate://capabilities/"
	capabilitiesURI    = capabilitiesPrefix + "{exchange}"
)

// addCapabilitiesResource serves getCapabilities as the resource
// perpgate://capabilities/{exchange}: the same pipeline as the tool with
// only `exchange`, so the key, its tier, rate limit and allowedExchanges
// apply.
func (s *Server) addCapabilitiesResource(srv *mcp.Server, keyOf keySource) {
	op, _ := contract.Lookup(contract.OpGetCapabilities)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "capabilities",
		Title:       "Exchange capabilities",
		URITemplate: capabilitiesURI,
		MIMEType:    "application/json",
		Description: "The getCapabilities answer of one exchange (hyperliquid, paradex, binance, bybit, okx, aster, paper): per operation native, emulated or unsupported, and the venue's features.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		x, ok := strings.CutPrefix(req.Params.URI, capabilitiesPrefix)
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		ctx, cancel := bus.WithDeadline(ctx, time.Now().Add(s.cfg.RequestTimeout))
		defer cancel()
		rid := uuid.NewString()
		ctx = telemetry.WithRequestID(ctx, rid)
		result, ce := s.callTool(ctx, rid, keyOf(req.Extra), op, json.RawMessage(mustJSON(map[string]string{"exchange": x})))
		s.log.Info("resource read done", "request_id", rid, "operation", op.Name, "code", codeOf(ce))
		if ce != nil {
			return nil, errors.New(string(envelopeJSON(ce)))
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: req.Params.URI, MIMEType: "application/json", Text: string(result),
		}}}, nil
	})
}
