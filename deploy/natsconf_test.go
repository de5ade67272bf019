package deploy

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite nats.conf from bus.ServiceUsers")

// TestNATSConfUpToDate fails when deploy/nats.conf differs from what
// bus.ServiceUsers, the permissions the embedded server of perpgate serve
// also uses, renders: a subject added to one and not the other. Run
// "make nats-conf" to regenerate the file.
func TestNATSConfUpToDate(t *testing.T) {
	want := NATSConf()
	if *update {
		if err := os.WriteFile("nats.conf", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("deploy/nats.conf is not what bus.ServiceUsers renders; run make nats-conf.\n--- rendered:\n%s", want)
	}
}
