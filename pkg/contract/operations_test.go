package contract

import (
	"regexp"
	"strings"
	"testing"
)

func TestOperationTable(t *testing.T) {
	if n := len(SpecOperations()); n != 20 {
		t.Fatalf("want SPEC's 20 operations, got %d", n)
	}
	for i, op := range Operations {
		if op.Extension != (i >= 20) {
			t.Errorf("%s: extension %v at row %d; SPEC's 20 come first, extensions after", op.Name, op.Extension, i)
		}
		if op.ByExchange && !op.ReadOnly {
			t.Errorf("%s: only reads may go without a credential", op.Name)
		}
	}
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	groups := map[Group]int{}
	for _, op := range Operations {
		groups[op.Group]++
		if got, _ := Lookup(op.Name); got != op {
			t.Errorf("Lookup(%q) does not find its own row", op.Name)
		}
		if got, _ := LookupTool(op.Tool); got != op {
			t.Errorf("LookupTool(%q) does not find its own row", op.Tool)
		}
		// DESIGN §13 names getCredentials' tool list_credentials.
		name := strings.ToLower(strings.Replace(op.Name, "getCredentials", "listCredentials", 1))
		if !snake.MatchString(op.Tool) || strings.ReplaceAll(op.Tool, "_", "") != name {
			t.Errorf("tool name %q does not map to operation %q", op.Tool, op.Name)
		}
		wantTier := TierFree
		if op.Group == GroupPlacement || op.Group == GroupManage {
			wantTier = TierBuilder
		}
		if op.MinTier != wantTier || op.ReadOnly != (wantTier == TierFree) {
			t.Errorf("%s: tier %s read-only %v, want %s", op.Name, op.MinTier, op.ReadOnly, wantTier)
		}
		if op.Summary == "" {
			t.Errorf("%s has no summary", op.Name)
		}
	}
	want := map[Group]int{GroupMarket: 6, GroupAccount: 5, GroupPlacement: 5, GroupManage: 4}
	for _, op := range Operations {
		if op.Extension {
			want[op.Group]++
		}
	}
	for g, n := range want {
		if groups[g] != n {
			t.Errorf("group %s has %d operations, want %d", g, groups[g], n)
		}
	}
}

func TestCodeStatuses(t *testing.T) {
	tests := []struct {
		code Code
		want int
	}{
		{CodeMissingAPIKey, 401}, {CodeInvalidKeyFormat, 401}, {CodeInvalidAPIKey, 401},
		{CodeKeyRevoked, 401}, {CodeKeyExpired, 401}, {CodeTierInsufficient, 403},
		{CodeOperationNotAllowed, 403}, {CodeCredentialNotAllowed, 403}, {CodeExchangeNotAllowed, 403},
		{CodeMissingOperation, 400}, {CodeInvalidJSON, 400}, {CodeRateLimited, 429},
		{CodeExchangeError, 502}, {CodeInternal, 500}, {CodeMethodNotAllowed, 405},
		{CodePayloadTooLarge, 413}, {CodeUnknownOperation, 400}, {CodeInvalidRequest, 400},
		{CodeCredentialNotFound, 404}, {CodeEnvironmentMismatch, 403}, {CodeUnknownMarket, 400},
		{CodeExchangeUnavailable, 503}, {CodeExchangeTimeout, 504}, {CodeKeyLimitReached, 409},
		{CodeAdminUnauthorized, 401},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			if got := tt.code.Status(); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTierLimits(t *testing.T) {
	tests := []struct {
		tier                          Tier
		min, day, maxKeys, maxStreams int
	}{
		{TierFree, 30, 5000, 3, 2}, {TierBuilder, 120, 50000, 10, 10}, {TierPro, 600, 500000, 25, 50},
	}
	for _, tt := range tests {
		t.Run(string(tt.tier), func(t *testing.T) {
			l := tt.tier.Limits()
			if l.PerMinute != tt.min || l.PerDay != tt.day || l.MaxKeys != tt.maxKeys || l.MaxStreams != tt.maxStreams {
				t.Fatalf("got %+v", l)
			}
		})
	}
	if TierFree.AtLeast(TierBuilder) || !TierPro.AtLeast(TierBuilder) || Tier("gold").AtLeast(TierFree) {
		t.Fatal("AtLeast ordering wrong")
	}
}

func TestSuggest(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"getmarkprice", "getMarkPrice"},
		{"get_mark_price", "getMarkPrice"},
		{"placeLimitOrdr", "placeLimitOrder"},
		{"cancelOrders", "cancelOrder"},
		{"getBalances", "getBalance"},
		{"withdraw", ""},
		{"x", ""},
	} {
		op, ok := Suggest(tt.in)
		got := ""
		if ok {
			got = op.Name
		}
		if got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
