package connector

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Capabilities is what an adapter declares it does (getCapabilities):
// per operation native, emulated or unsupported, and the venue's facts.
// connectortest.CheckCapabilities holds the declaration to the code: an
// operation the adapter implements is not unsupported, one it does not
// implement is, and the protection linking matches ProtectionLinker.
type Capabilities struct {
	Operations map[string]contract.Support
	Features   contract.Features
}

// Declarer is implemented by adapters that declare their capabilities.
type Declarer interface {
	Capabilities() Capabilities
}

// FundingPaymentsReader is implemented by adapters that read the
// account's funding payments (getFundingPayments). m is nil for every
// market; since is Unix seconds, 0 for no bound. The answer holds at most
// limit payments, newest first; adapters page the venue to reach it.
type FundingPaymentsReader interface {
	GetFundingPayments(ctx context.Context, c Credential, m *Market, since int64, limit int) ([]contract.FundingPayment, error)
}

// venueOps maps each operation an adapter serves to the interface that
// serves it: SPEC's 20 are the Adapter itself, extensions their optional
// interface. Operations not listed (getCapabilities) are the gateway's own
// and native everywhere.
var venueOps = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, op := range contract.SpecOperations() {
		m[op.Name] = reflect.TypeFor[Adapter]()
	}
	m[contract.OpGetFundingPayments] = reflect.TypeFor[FundingPaymentsReader]()
	return m
}()

// VenueOperations returns the operations an adapter must declare, sorted.
func VenueOperations() []string { return slices.Sorted(maps.Keys(venueOps)) }

// Implements reports whether adapter a has the code of venue operation op.
func Implements(a Adapter, op string) bool {
	t, ok := venueOps[op]
	return ok && reflect.TypeOf(a).Implements(t)
}

// capabilities answers getCapabilities from the adapter's declaration;
// operations it does not declare are derived from what it implements.
func capabilities(a Adapter) contract.CapabilitiesResult {
	var decl Capabilities
	if d, ok := a.(Declarer); ok {
		decl = d.Capabilities()
	}
	ops := map[string]contract.Support{}
	for _, op := range contract.Operations {
		s, ok := decl.Operations[op.Name]
		switch {
		case ok:
		case venueOps[op.Name] == nil:
			s = contract.Native
		case Implements(a, op.Name):
			s = contract.Native
		default:
			s = contract.Unsupported
		}
		ops[op.Name] = s
	}
	f := decl.Features
	if f.Amendable == nil {
		f.Amendable = []string{}
	}
	f.AttachedProtection = attachMode(a)
	return contract.CapabilitiesResult{Exchange: a.Exchange(), Operations: ops, Features: f}
}

// unsupported is the error of an extension operation the venue lacks.
func unsupported(a Adapter, op string) error {
	return contract.Errorf(contract.CodeInvalidRequest,
		"%s is not supported on %s (getCapabilities lists what is)", op, a.Exchange())
}

// CheckDeclaration compares an adapter's declared capabilities with its
// code and returns each mismatch; connectortest.CheckCapabilities fails a
// test on them.
func CheckDeclaration(a Adapter) []string {
	d, ok := a.(Declarer)
	if !ok {
		return []string{fmt.Sprintf("%T declares no capabilities (connector.Declarer)", a)}
	}
	decl := d.Capabilities()
	var bad []string
	for _, op := range VenueOperations() {
		s, ok := decl.Operations[op]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: not declared", op))
		case !s.Valid():
			bad = append(bad, fmt.Sprintf("%s: %q is not native, emulated or unsupported", op, s))
		case Implements(a, op) && s == contract.Unsupported:
			bad = append(bad, fmt.Sprintf("%s: implemented but declared unsupported", op))
		case !Implements(a, op) && s != contract.Unsupported:
			bad = append(bad, fmt.Sprintf("%s: declared %s but not implemented", op, s))
		}
	}
	for op := range decl.Operations {
		if _, ok := venueOps[op]; !ok {
			bad = append(bad, fmt.Sprintf("%s: declared but not an operation the venue serves", op))
		}
	}
	linked := false
	if l, ok := a.(ProtectionLinker); ok {
		linked = l.LinksProtection()
	}
	if decl.Features.LinkedProtection != linked {
		bad = append(bad, fmt.Sprintf("features.linkedProtection %v, but the adapter links protection: %v", decl.Features.LinkedProtection, linked))
	}
	if p := decl.Operations[contract.OpPlaceProtectionOrders]; (p == contract.Native) != linked {
		bad = append(bad, fmt.Sprintf("placeProtectionOrders %s, but the adapter links protection: %v (unlinked pairs are the gateway's emulation)", p, linked))
	}
	return append(bad, checkFeatures(decl.Features)...)
}

func checkFeatures(f contract.Features) []string {
	var bad []string
	if f.MaxBatchSize < 1 {
		bad = append(bad, "features.maxBatchSize must be at least 1")
	}
	if !slices.Contains([]string{"mark", "last", "index"}, f.TriggerPriceType) {
		bad = append(bad, fmt.Sprintf("features.triggerPriceType %q: want mark, last or index", f.TriggerPriceType))
	}
	if f.MinNotionalPrice != "limit" && f.MinNotionalPrice != "mark" {
		bad = append(bad, fmt.Sprintf("features.minNotionalPrice %q: want limit or mark", f.MinNotionalPrice))
	}
	if f.DeadManSwitch != contract.Native && f.DeadManSwitch != contract.Emulated {
		bad = append(bad, fmt.Sprintf("features.deadManSwitch %q: want native or emulated", f.DeadManSwitch))
	}
	if f.FundingIntervalHours < 1 || f.FillsHistoryDays < 1 {
		bad = append(bad, "features.fundingIntervalHours and fillsHistoryDays must be positive")
	}
	return bad
}

// Supports is the Operations of a declaration: every venue operation
// native except those named emulated or unsupported. An adapter that
// gains or loses an operation must change what it names here, or
// CheckDeclaration fails.
func Supports(emulated []string, unsupported ...string) map[string]contract.Support {
	out := map[string]contract.Support{}
	for _, op := range VenueOperations() {
		out[op] = contract.Native
	}
	for _, op := range emulated {
		out[op] = contract.Emulated
	}
	for _, op := range unsupported {
		out[op] = contract.Unsupported
	}
	return out
}
