package simkit

import "testing"

func TestBook(t *testing.T) {
	b := New[string, int](map[string]string{"k": "s"})
	if s, ok := b.Secret("k"); !ok || s != "s" {
		t.Fatalf("Secret(k) = %q, %v", s, ok)
	}
	if _, ok := b.Secret("other"); ok {
		t.Fatal("an unknown key has a secret")
	}
	b.AddKey("other", "s2")
	b.Hit("GET", "/a")
	b.Hit("GET", "/a")
	b.Hit("POST", "/b")
	if b.Hits("GET", "/a") != 2 || b.TotalHits() != 3 {
		t.Fatalf("hits %d, total %d", b.Hits("GET", "/a"), b.TotalHits())
	}
	b.FailNext("GET", "/a", 1)
	b.FailNext("GET", "/a", 2)
	for _, want := range []int{1, 2} {
		if f, ok := b.NextFailure("GET", "/a"); !ok || f != want {
			t.Fatalf("NextFailure = %d, %v; want %d", f, ok, want)
		}
	}
	if _, ok := b.NextFailure("GET", "/a"); ok {
		t.Fatal("a failure answered twice")
	}
}
