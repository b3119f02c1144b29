package config

import (
	"strings"
	"testing"
	"time"
)

func TestARMDefaultsAndOverrides(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	a := c.ARM
	if !a.Enabled || a.Weight != 75 || a.Window != time.Minute || a.RingSlots != 16384 {
		t.Fatalf("defaults %+v", a)
	}
	c, err = load(t, "arm:\n  weight: 50\n  ring_slots: 1024\n")
	if err != nil || c.ARM.Weight != 50 || c.ARM.RingSlots != 1024 {
		t.Fatalf("from the file: %v %+v", err, c.ARM)
	}
	t.Setenv("SUBAGENT_ARM_RING_SLOTS", "64")
	if c, err = load(t, ""); err != nil || c.ARM.RingSlots != 64 {
		t.Fatalf("from the environment: %v %+v", err, c)
	}
}

func TestARMRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"arm:\n  weight: 100\n", "arm.weight: 100 is not a percentage"},
		{"arm:\n  ring_slots: 1000\n", "arm.ring_slots: 1000 is not a power of two"},
		{"arm:\n  window: 1s\n", "arm.window: 1s is not from 10s to 1h"},
		{"arm:\n  drain_interval: 1ms\n", "arm.drain_interval: 1ms"},
		{"arm:\n  process_transactions: 0\n", "arm.process_transactions: 0 is not from 1 to 65536"},
		{"arm:\n  allow_uids: [-1]\n", "arm.allow_uids: -1"},
		{"arm:\n  wieght: 5\n", "unknown key arm.wieght"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
