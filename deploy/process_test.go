package deploy

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// field waits for p's first log line with message msg and returns its
// string field (the services listen on port 0 and log the address). It
// fails t at once if p exits meanwhile.
func field(t *testing.T, p *testenv.Process, msg, field string) string {
	t.Helper()
	var v string
	testenv.Poll(t, fmt.Sprintf("%s logs %q", p.Name, msg), 15*time.Second, func() error {
		p.Check(t)
		for _, rec := range p.Records() {
			if rec["msg"] == msg {
				if v, _ = rec[field].(string); v != "" {
					return nil
				}
				t.Fatalf("%s: %q line has no %s", p.Name, msg, field)
			}
		}
		return errors.New("no such line yet")
	})
	return v
}
