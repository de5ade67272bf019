package venuekit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// REST is the settings every REST venue has. A connector's Config embeds
// it and adds its own.
type REST struct {
	MainnetURL string        // REST base for mainnet credentials
	TestnetURL string        // REST base for testnet credentials
	Timeout    time.Duration // per upstream call
	// Now is the local clock; nil means time.Now. Tests skew it.
	Now func() time.Time
}

// NewREST is the defaults: the venue's two bases and a 10 s timeout.
func NewREST(mainnet, testnet string) REST {
	return REST{MainnetURL: mainnet, TestnetURL: testnet, Timeout: 10 * time.Second}
}

// BaseURL is the REST base of a credential's environment, without a
// trailing slash.
func (r REST) BaseURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(r.TestnetURL, "/")
	}
	return strings.TrimRight(r.MainnetURL, "/")
}

// Clock is Now, or time.Now when unset.
func (r REST) Clock() func() time.Time {
	if r.Now == nil {
		return time.Now
	}
	return r.Now
}

// Check reports bad bases (named after setting, with example as a good
// one) and a timeout that is not positive.
func (r REST) Check(venue, setting, example string, more ...URL) error {
	urls := append([]URL{{"mainnet URL", r.MainnetURL}, {"testnet URL", r.TestnetURL}}, more...)
	var errs []error
	for _, u := range urls {
		errs = append(errs, connector.CheckBaseURL(setting, venue+" "+u.Name, u.Value, example))
	}
	if r.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("the %s upstream timeout must be positive", venue))
	}
	return errors.Join(errs...)
}

// URL is one more base a venue has (Bybit's demo host), for Check.
type URL struct{ Name, Value string }

// WSURL turns an http(s) base into the ws(s) one of the same host: a
// simulator serves its websocket where it serves REST.
func WSURL(base string) string {
	return "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http")
}

// Env reads a connector's settings through a lookup function and gathers
// every problem, so startup reports them all at once.
type Env struct {
	lookup func(string) (string, bool)
	errs   []error
}

// NewEnv reads through lookup (os.LookupEnv, or a map in tests).
func NewEnv(lookup func(string) (string, bool)) *Env { return &Env{lookup: lookup} }

// Get is the setting's value and whether it is set and not empty.
func (e *Env) Get(name string) (string, bool) {
	v, ok := e.lookup(name)
	return v, ok && v != ""
}

// String sets every target to the setting's value when it is given.
func (e *Env) String(name string, targets ...*string) bool {
	v, ok := e.Get(name)
	if ok {
		for _, t := range targets {
			*t = v
		}
	}
	return ok
}

// Millis sets d from a setting in whole milliseconds when it is given.
func (e *Env) Millis(name string, d *time.Duration) {
	if v, ok := e.Get(name); ok {
		var err error
		if *d, err = connector.Millis(name, v); err != nil {
			e.errs = append(e.errs, err)
		}
	}
}

// Fail records a problem found while reading.
func (e *Env) Fail(err error) { e.errs = append(e.errs, err) }

// Err is every problem read, joined with validate's.
func (e *Env) Err(validate error) error { return errors.Join(append(e.errs, validate)...) }
