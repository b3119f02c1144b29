package spmiwire

import "testing"

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"/CPU/cpu0/ ": "CPU/cpu0", " CPU": "CPU", "//": "", "": "", "RTime/LAN/[::1]/": "RTime/LAN/[::1]", "a b/c": "a b/c",
	} {
		if got := CleanPath(in); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}
