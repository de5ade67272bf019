package paper_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	pe "github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// TestStopDirection runs DESIGN §13's stop table against the paper venue:
// the paper exchange defines a stop the way the gateway does, from the
// mark at placement.
func TestStopDirection(t *testing.T) {
	frozen := time.Now()
	e := pe.New(pe.Config{Seed: 1, Now: func() time.Time { return frozen }})
	srv := httptest.NewServer(venue.NewHandler(e))
	t.Cleanup(srv.Close)
	a := paper.NewAdapter(venue.NewClient(srv.URL, connector.NewHTTPClient(5*time.Second)))
	r := connectortest.ServeREST(t, a, contract.Mainnet, nil)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, e, btc, btc, "60000"))
}
