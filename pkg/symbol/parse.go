package symbol

import (
	"strconv"
	"strings"
)

// accepted is appended to every parse error so the message says what to send.
const accepted = "use BASE, BASE-QUOTE, BASE-QUOTE-PERP, BASE/QUOTE:QUOTE or BASEQUOTE " +
	"with quote USD, USDT or USDC (e.g. BTC, BTC-USD-PERP, BTCUSDT, 1000PEPE-USDT-PERP, kPEPE)"

// Error is the error Parse returns for a symbol it cannot read.
type Error struct {
	Input  string // what the client sent
	Reason string // what is wrong with it
}

// Error returns a message naming the input, the problem and the accepted forms.
func (e *Error) Error() string {
	in := e.Input
	if len(in) > MaxLength {
		in = in[:MaxLength] + "..."
	}
	return "invalid market symbol " + strconv.Quote(in) + ": " + e.Reason + "; " + accepted
}

// Parse reads a market symbol in any of the forms clients and venues use
// and returns it normalized to upper case:
//
//	BTC, btc, BTC-PERP                      Base BTC, no quote
//	BTC-USD, BTC-USD-PERP, BTC_USDT         Base BTC, quote from the symbol
//	BTC/USDT-P, BTC/USDT:USDT               (the settle currency must equal the quote)
//	BTC-USDT-SWAP, BTC-PERPETUAL            other perpetual suffixes
//	BTCUSDT, BTCUSD, BTCUSDC                a known quote at the end is split off
//	1000PEPE, 1000PEPEUSDT, 1MBABYDOGE      Base PEPE / BABYDOGE with Multiplier 1000 / 1000000
//	kPEPE, kPEPE-USD-PERP                   Base PEPE, Multiplier 1000
//
// A multiplier is a leading power of ten from 10 to MaxMultiplier (1INCH
// stays 1INCH), 1M for a million, or a lower-case k before an upper-case
// letter (kpepe, all lower case, is the asset KPEPE). A bare name ending in
// USD, USDT or USDC is read as concatenated, so such an asset needs a
// separator: XUSD-USDT. Anything else, including whitespace, inputs longer
// than MaxLength, a base (with its multiplier prefix) longer than
// MaxBaseLength, a missing base (-USD-PERP) or an unknown quote, returns
// an *Error. Parse never panics.
func Parse(s string) (Symbol, error) {
	fail := func(reason string) (Symbol, error) {
		return Symbol{}, &Error{Input: s, Reason: reason}
	}
	switch {
	case s == "":
		return fail("empty")
	case len(s) > MaxLength:
		return fail("longer than " + strconv.Itoa(MaxLength) + " characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return fail("contains whitespace")
		case !isAlnum(c) && c != '-' && c != '_' && c != '/' && c != ':':
			return fail("contains " + strconv.QuoteRune(rune(c)) + "; only letters, digits, '-', '_', '/' and ':' are allowed")
		}
	}

	body, settle := s, ""
	if i := strings.IndexByte(s, ':'); i >= 0 {
		body, settle = s[:i], strings.ToUpper(s[i+1:])
		if !IsQuote(settle) {
			return fail("settle currency " + strconv.Quote(s[i+1:]) + " after ':' is not USD, USDT or USDC")
		}
		if !strings.Contains(body, "/") {
			return fail("':' needs the BASE/QUOTE:QUOTE form")
		}
	}
	tokens, err := split(body)
	if err != "" {
		return fail(err)
	}
	if len(tokens) > 3 {
		return fail("too many parts")
	}

	rawBase, quote, hasSuffix := tokens[0], "", false
	for _, tok := range tokens[1:] {
		up := strings.ToUpper(tok)
		switch {
		case hasSuffix:
			return fail("nothing may follow the perpetual suffix")
		case isSuffix(up):
			hasSuffix = true
		case quote != "":
			return fail(strconv.Quote(tok) + " is not a perpetual suffix (PERP, P, SWAP or PERPETUAL)")
		case IsQuote(up):
			quote = up
		default:
			return fail("unknown quote " + strconv.Quote(tok) + "; known quotes are USD, USDT and USDC")
		}
	}
	if strings.Contains(body, "/") && quote == "" {
		return fail("'/' must be followed by a quote (BASE/QUOTE)")
	}
	if settle != "" && settle != quote {
		return fail("settle currency " + settle + " differs from quote " + quote + "; only linear perpetuals are supported")
	}

	mult := 1
	if len(rawBase) > 1 && rawBase[0] == 'k' && rawBase[1] >= 'A' && rawBase[1] <= 'Z' {
		mult, rawBase = 1000, rawBase[1:]
	}
	base := strings.ToUpper(rawBase)
	if quote == "" {
		base, quote = splitQuote(base)
	}
	if mult == 1 {
		var ok bool
		if mult, base, ok = splitMultiplier(base); !ok {
			return fail("multiplier prefix larger than " + strconv.Itoa(MaxMultiplier))
		}
	}
	switch {
	case base == "" || IsQuote(base):
		return fail("missing base asset")
	case !hasLetter(base):
		return fail("base asset " + strconv.Quote(base) + " has no letter")
	}
	sym := Symbol{Base: base, Quote: quote, Multiplier: mult}
	if len(sym.PrefixedBase()) > MaxBaseLength {
		return fail("base asset longer than " + strconv.Itoa(MaxBaseLength) + " characters")
	}
	return sym, nil
}

// split cuts body at '-', '_' and '/' and checks that no part is empty and
// that a '/' is the first separator. It returns a reason on failure.
func split(body string) ([]string, string) {
	var tokens []string
	start := 0
	for i := 0; i <= len(body); i++ {
		if i < len(body) && body[i] != '-' && body[i] != '_' && body[i] != '/' {
			continue
		}
		if i == start {
			if start == 0 {
				return nil, "missing base asset"
			}
			return nil, "empty part between separators"
		}
		if i < len(body) && body[i] == '/' && len(tokens) > 0 {
			return nil, "'/' may only separate base and quote"
		}
		tokens = append(tokens, body[start:i])
		start = i + 1
	}
	return tokens, ""
}

// splitQuote splits a known quote off the end of a concatenated BTCUSDT,
// keeping at least one character of base.
func splitQuote(base string) (string, string) {
	for _, q := range quotes {
		if len(base) > len(q) && strings.HasSuffix(base, q) {
			return base[:len(base)-len(q)], q
		}
	}
	return base, ""
}

// splitMultiplier reads a multiplier prefix: a power of ten of at least 10,
// or 1M, followed by a letter. ok is false when the prefix is a power of
// ten above MaxMultiplier.
func splitMultiplier(base string) (mult int, rest string, ok bool) {
	if len(base) > 3 && strings.HasPrefix(base, "1M") && isLetter(base[2]) {
		return 1_000_000, base[2:], true
	}
	n := 0
	for n < len(base) && base[n] >= '0' && base[n] <= '9' {
		n++
	}
	if n < 2 || n == len(base) || base[0] != '1' || strings.Trim(base[1:n], "0") != "" {
		return 1, base, true
	}
	if n-1 > 9 {
		return 0, "", false
	}
	m, _ := strconv.Atoi(base[:n]) // at most ten digits: fits
	return m, base[n:], true
}

func isSuffix(up string) bool {
	for _, s := range suffixes {
		if up == s {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func isAlnum(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}
