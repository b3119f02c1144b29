package slo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A damaged or foreign state file is refused whole with a reason, and
// the counts stay as they were; a good one restores only objectives of
// the same name and history.
func TestStateRefusesCorruptInput(t *testing.T) {
	objs := []Objective{
		{Name: "a", Application: "A", Transaction: "*", Threshold: time.Second, Target: 0.99, Window: time.Hour},
		{Name: "b", Application: "B", Transaction: "*", Target: 0.9, Window: 30 * 24 * time.Hour},
	}
	s := NewSet(objs)
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i, x := range s.objs {
		x.add(now, uint64(100+i), uint64(3+i))
	}
	good := s.Marshal()
	dir := t.TempDir()
	write := func(b []byte) string {
		p := filepath.Join(dir, StateFile)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 1
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "magic"},
		{"foreign", []byte("{\"objectives\": []}\n................"), "magic"},
		{"a flipped bit", flipped, "checksum"},
		{"truncated", good[:len(good)-9], "checksum"},
	} {
		fresh := NewSet(objs)
		_, err := fresh.Load(write(c.b))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), StateFile) {
			t.Errorf("%s: %v, want an error naming the file and %q", c.name, err, c.want)
		}
		if st := fresh.Statuses(now); st[0].Total != 0 || st[1].Total != 0 {
			t.Errorf("%s: counts changed by a refused file", c.name)
		}
	}

	changed := append([]Objective(nil), objs...)
	changed[0].Threshold = 2 * time.Second // other meaning: not restored
	fresh := NewSet(changed)
	if n, err := fresh.Load(write(good)); err != nil || n != 1 {
		t.Fatalf("Load: %d, %v; want 1 restored", n, err)
	}
	st := fresh.Statuses(now)
	if st[0].Total != 0 || st[1].Total != 101 || st[1].Good != 97 {
		t.Errorf("restored %+v %+v, want only b's 101 and 97", st[0].Total, st[1])
	}
}
