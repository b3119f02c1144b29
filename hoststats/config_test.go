package hoststats

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"CPU", "Mem", "PagSp", "Disk", "LAN", "IP", "TCP", "UDP", "ICMP", "Proc", "FS"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v", got)
	}
}

func TestProvidersConfigErrors(t *testing.T) {
	root := fixtureRoot(t)
	for field, mod := range map[string]func(*Config){
		"DiskIgnore":   func(c *Config) { c.DiskIgnore = "(" },
		"FSTypeIgnore": func(c *Config) { c.FSTypeIgnore = "[a-" },
		"Disabled":     func(c *Config) { c.Disabled = map[string]bool{"Cpu": true} },
		"ProcRoot":     func(c *Config) { c.ProcRoot = root + "/nonexistent" },
		"SysRoot":      func(c *Config) { c.SysRoot = root + "/config.go" },
	} {
		cfg := FixtureConfig(root)
		mod(&cfg)
		_, err := Providers(cfg)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name the field", field, err)
		}
	}
}

func TestProvidersDisabled(t *testing.T) {
	cfg := FixtureConfig(fixtureRoot(t))
	cfg.Disabled = map[string]bool{"Proc": true, "Disk": true, "LAN": false}
	var got []string
	for _, p := range providers(t, cfg) {
		got = append(got, p.Name())
	}
	want := []string{"CPU", "Mem", "PagSp", "LAN", "IP", "TCP", "UDP", "ICMP", "FS"}
	if !slices.Equal(got, want) {
		t.Errorf("providers %v, want %v", got, want)
	}
	// Without Disk and LAN, sysfs is not needed.
	cfg.Disabled = map[string]bool{"Disk": true, "LAN": true}
	cfg.SysRoot = "/nonexistent"
	if _, err := Providers(cfg); err != nil {
		t.Errorf("sysfs required with Disk and LAN disabled: %v", err)
	}
}

// The ignore expressions are the configured ones, not the defaults.
func TestIgnoreExpressionsApplied(t *testing.T) {
	cfg := FixtureConfig(fixtureRoot(t))
	cfg.DiskIgnore = `^sdb$`
	cfg.FSTypeIgnore = `^(ext4|proc|sysfs|devtmpfs|devpts|cgroup2|autofs|mqueue|overlay)$`
	s := build(t, providers(t, cfg), nil)
	if got := slices.Sorted(maps.Keys(instances(t, s, "Disk/"))); !slices.Equal(got, []string{"loop0", "sda"}) {
		t.Errorf("Disk instances %v with DiskIgnore ^sdb$", got)
	}
	fs := instances(t, s, "FS/")
	if _, ok := fs["root"]; ok {
		t.Error("ext4 / reported although ext4 is ignored")
	}
	if _, ok := fs["home"]; !ok {
		t.Errorf("xfs /home missing: %v", fs)
	}
}
