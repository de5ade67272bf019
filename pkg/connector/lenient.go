package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// Venues do not keep one JSON type per field: the same id, time or price
// comes as a string in one answer and a number in another (Aster's docs
// show both; OKX tolerates numeric codes; Paradex sends some figures as
// numbers). These types read either, never through float64, so a read does
// not break on the venue's choice of the day.

// lenientText returns a JSON string's or number's text; null is "".
func lenientText(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return "", nil
	case b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return "", err
		}
		return n.String(), nil
	}
	return "", fmt.Errorf("want a string or a number, got %s", b)
}

// Decimal is a decimal sent as a JSON string or number. "" and null read
// as zero with Given false, so a figure the venue left out can be told
// from a zero it stated.
type Decimal struct {
	decimal.Decimal
	Given bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s, err := lenientText(b)
	if err != nil || s == "" {
		*d = Decimal{}
		return err
	}
	v, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("decimal %q: %w", s, err)
	}
	*d = Decimal{Decimal: v, Given: true}
	return nil
}

// D is the value as a decimal.Decimal.
func (d Decimal) D() decimal.Decimal { return d.Decimal }

// Int is an integer (an id, a Unix time, a code) sent as a JSON string or
// number; "" and null read as 0.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s, err := lenientText(b)
	if err != nil || s == "" {
		*n = 0
		return err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("integer %q: %w", s, err)
	}
	*n = Int(v)
	return nil
}

// Text is an id or a code sent as a JSON string or number, kept as its
// text (large ids keep every digit).
type Text string

// UnmarshalJSON implements json.Unmarshaler.
func (t *Text) UnmarshalJSON(b []byte) error {
	s, err := lenientText(b)
	*t = Text(s)
	return err
}
