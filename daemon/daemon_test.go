package daemon

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/config"
)

// Errors of the host statistics' configuration name the configuration
// key and what it allows, never the Go field.
func TestHostErrorsNameTheKey(t *testing.T) {
	base := fixtureConfig(t)
	if _, _, err := NewHierarchy(base, nil, nil); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	cases := []struct {
		mod       func(*config.Config)
		key, want string
		goField   string
	}{
		{func(c *config.Config) { c.Host.ProcRoot = "/nonexistent" }, "host.proc_root", "mount point of procfs", "ProcRoot"},
		{func(c *config.Config) { c.Host.SysRoot = "/nonexistent" }, "host.sys_root", "mount point of sysfs", "SysRoot"},
		{func(c *config.Config) { c.Host.DiskIgnore = "(" }, "host.disk_ignore", "regular expression", "DiskIgnore"},
		{func(c *config.Config) { c.Host.FSTypeIgnore = "[a-" }, "host.fs_type_ignore", "regular expression", "FSTypeIgnore"},
		{func(c *config.Config) { c.Host.Disabled = []string{"Cpu"} }, "host.disabled", "CPU, Mem", "Disabled"},
	}
	for _, tc := range cases {
		c := *base
		tc.mod(&c)
		_, _, err := NewHierarchy(&c, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.key+": ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.goField) {
			t.Errorf("%s: error %v, want it to name the key and say %q", tc.key, err, tc.want)
		}
	}
}

// A configuration loaded with the defaults and then given other
// directories (as tests and embedders do) puts the DDS socket in the new
// run directory, never in the default one.
func TestDDSSocketFollowsTheRunDirectory(t *testing.T) {
	c := fixtureConfig(t)
	c.DDS.Socket, c.RunDir = "", filepath.Join(t.TempDir(), "run")
	if _, err := New(c, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.RunDir, "dds.sock"); c.DDS.Socket != want {
		t.Fatalf("dds.socket %q, want %q", c.DDS.Socket, want)
	}
}

// fixtureConfig is the default configuration on the fixture /proc and
// /sys, with directories of the test's own.
func fixtureConfig(t *testing.T) *config.Config {
	t.Helper()
	fixture, _ := filepath.Abs("../hoststats/testdata")
	t.Setenv("SUBAGENT_CONFIG", "")
	c, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Host.ProcRoot, c.Host.SysRoot = filepath.Join(fixture, "proc"), filepath.Join(fixture, "sys")
	c.RunDir, c.StateDir = t.TempDir(), t.TempDir()
	return c
}
