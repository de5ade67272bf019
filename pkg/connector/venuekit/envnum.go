package venuekit

import (
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// Decimal sets d from a setting when it is given; one that is not a
// decimal is reported with example as a good one (d is then zero).
func (e *Env) Decimal(name, example string, d *decimal.Decimal) {
	if v, ok := e.Get(name); ok {
		var err error
		if *d, err = decimal.NewFromString(v); err != nil {
			e.Fail(fmt.Errorf("%s: %q is not a decimal such as %s", name, v, example))
		}
	}
}

// Int sets n from a setting when it is given.
func (e *Env) Int(name string, n *int) {
	if v, ok := e.Get(name); ok {
		var err error
		if *n, err = strconv.Atoi(v); err != nil {
			e.Fail(fmt.Errorf("%s: %q is not an integer", name, v))
		}
	}
}
