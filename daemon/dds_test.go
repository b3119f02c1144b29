package daemon

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/dds"
)

// The configured limits reach the supplier server: a supplier within the
// library's ceilings but beyond dds.max_stats is refused by the daemon,
// with the limit in the message.
func TestDDSConfiguredLimitsApply(t *testing.T) {
	t.Setenv("SUBAGENT_CONFIG", "")
	c, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c.DDS.Socket = filepath.Join(dir, "dds.sock")
	c.DDS.MaxStats = 1
	cfg, err := DDSConfig(c, slog.New(slog.DiscardHandler)).Norm()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := dds.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()

	v := client.NewVendor("Acme", "Acme suppliers", 9999)
	cx := v.Context("Pump", "A pump", 1)
	cx.Gauge("speed", "Speed", 1)
	cx.Gauge("temp", "Temperature", 2)
	s, err := client.Start(v, filepath.Join(dir, "acme.shm"), &client.Options{Socket: c.DDS.Socket})
	if err == nil {
		s.Exit()
		t.Fatal("a context with 2 statistics registered under dds.max_stats = 1")
	}
	if !strings.Contains(err.Error(), "at most 1 allowed") {
		t.Fatalf("refusal %q does not name the limit", err)
	}

	v = client.NewVendor("Acme", "Acme suppliers", 9999)
	v.Context("Pump", "A pump", 1).Gauge("speed", "Speed", 1)
	s, err = client.Start(v, filepath.Join(dir, "acme.shm"), &client.Options{Socket: c.DDS.Socket})
	if err != nil {
		t.Fatalf("a supplier within the limits: %v", err)
	}
	s.Exit()
}
