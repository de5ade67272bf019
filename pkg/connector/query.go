package connector

import (
	"net/url"
	"strings"
)

// Query is an ordered list of request parameters. Venues that sign a query
// string sign exactly what is sent, so the order is kept as written.
type Query []Param

// Param is one request parameter.
type Param struct{ Key, Value string }

// Add returns q with key=value appended.
func (q Query) Add(key, value string) Query { return append(q, Param{key, value}) }

// Encode renders q as a query string, values URL-encoded, in order.
func (q Query) Encode() string {
	var b strings.Builder
	for i, p := range q {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.Value))
	}
	return b.String()
}
