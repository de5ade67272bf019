package apikey

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
)

// mask is what a Key shows in place of its secret part.
const mask = "****"

// Key is a full API key that prints as a mask: fmt (every verb, also
// inside other values), log/slog and encoding/json see only its Display
// part followed by "****". Reveal returns the key itself, for the one
// response that hands it to its owner. The zero Key is empty.
type Key struct {
	// A pointer, so that even fmt's reflection on a struct holding a Key
	// in an unexported field prints an address rather than the key.
	v *string
}

// FromString wraps a raw key, e.g. one read from a request header, so it
// can be passed around and logged safely.
func FromString(raw string) Key { return Key{v: &raw} }

// Reveal returns the full key. Call it only to hand the key to its owner
// or to hash it.
func (k Key) Reveal() string {
	if k.v == nil {
		return ""
	}
	return *k.v
}

// Env returns the environment the key's prefix names, or ErrFormat.
func (k Key) Env() (Env, error) { return Parse(k.Reveal()) }

// Hash returns Hash of the full key.
func (k Key) Hash() string { return Hash(k.Reveal()) }

// Display returns the key's first DisplayLength characters.
func (k Key) Display() string { return Display(k.Reveal()) }

// String returns the masked key, e.g. mt_live_AbCd****.
func (k Key) String() string {
	if k.v == nil {
		return ""
	}
	return k.Display() + mask
}

// GoString returns the masked key as Go syntax, for %#v.
func (k Key) GoString() string { return "apikey.Key(" + strconv.Quote(k.String()) + ")" }

// Format prints the masked key for every verb, so no verb (%x, %q, %v,
// %#v, ...) can reach the full key.
func (k Key) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, k.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(k.String()))
	default:
		fmt.Fprint(f, k.String())
	}
}

// LogValue returns the masked key, so log/slog never records the full key.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// MarshalJSON encodes the masked key; a response that must carry the full
// key puts Reveal in a string field instead.
func (k Key) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }
