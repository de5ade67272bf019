package connector

import (
	"context"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// declared is an adapter whose code is only its declaration: the Adapter
// methods come from the nil embedded interface and are never called.
type declared struct {
	Adapter
	caps Capabilities
}

func (d declared) Capabilities() Capabilities { return d.caps }
func (declared) Exchange() contract.Exchange  { return contract.Paper }

// withFunding also has the code of getFundingPayments.
type withFunding struct{ declared }

func (withFunding) GetFundingPayments(context.Context, Credential, *Market, int64, int) ([]contract.FundingPayment, error) {
	return nil, nil
}

func fullDeclaration(funding contract.Support) Capabilities {
	ops := map[string]contract.Support{}
	for _, op := range VenueOperations() {
		ops[op] = contract.Native
	}
	ops[contract.OpPlaceProtectionOrders] = contract.Emulated
	ops[contract.OpGetFundingPayments] = funding
	return Capabilities{Operations: ops, Features: contract.Features{MaxBatchSize: 5, TriggerPriceType: "mark",
		MinNotionalPrice: "limit", FundingIntervalHours: 8, DeadManSwitch: contract.Emulated, FillsHistoryDays: 7}}
}

// TestCheckDeclaration: a connector that gains or loses an operation
// without its declaration changing is caught, as is an undeclared one.
func TestCheckDeclaration(t *testing.T) {
	tests := []struct {
		name string
		a    Adapter
		want string // "" when consistent
	}{
		{"consistent with funding", withFunding{declared{caps: fullDeclaration(contract.Native)}}, ""},
		{"consistent without funding", declared{caps: fullDeclaration(contract.Unsupported)}, ""},
		{"gained the operation, declaration unchanged", withFunding{declared{caps: fullDeclaration(contract.Unsupported)}},
			"getFundingPayments: implemented but declared unsupported"},
		{"lost the operation, declaration unchanged", declared{caps: fullDeclaration(contract.Native)},
			"getFundingPayments: declared native but not implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Join(CheckDeclaration(tt.a), "; ")
			if (tt.want == "") != (bad == "") || !strings.Contains(bad, tt.want) {
				t.Fatalf("mismatches %q, want %q", bad, tt.want)
			}
		})
	}
	undeclared := fullDeclaration(contract.Native)
	delete(undeclared.Operations, contract.OpGetFills)
	if bad := CheckDeclaration(withFunding{declared{caps: undeclared}}); len(bad) != 1 || !strings.Contains(bad[0], "getFills: not declared") {
		t.Fatalf("undeclared getFills: %v", bad)
	}
	linked := fullDeclaration(contract.Native)
	linked.Features.LinkedProtection = true
	if bad := CheckDeclaration(withFunding{declared{caps: linked}}); len(bad) == 0 {
		t.Fatal("linkedProtection declared without a ProtectionLinker passes")
	}
}

// TestCapabilitiesAnswer: getCapabilities lists every operation of the
// table; the gateway's own are native, undeclared ones follow the code.
func TestCapabilitiesAnswer(t *testing.T) {
	caps := fullDeclaration(contract.Native)
	delete(caps.Operations, contract.OpGetFundingPayments)
	res := capabilities(declared{caps: caps})
	if len(res.Operations) != len(contract.Operations) {
		t.Fatalf("%d operations, want %d", len(res.Operations), len(contract.Operations))
	}
	if res.Operations[contract.OpGetCapabilities] != contract.Native || res.Operations[contract.OpGetFundingPayments] != contract.Unsupported ||
		res.Operations[contract.OpPlaceProtectionOrders] != contract.Emulated || res.Features.Amendable == nil {
		t.Fatalf("got %+v", res)
	}
}
