package rtimelan

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// While a change of the hosts is being saved (an fsync'd rewrite), the
// readers of the monitor (an SNMP read, the table, an ICMP reply) are not
// held up; the next change waits for the save, so that the saves happen
// in the order of the changes and the last one holds both.
func TestReadsDoNotWaitForASave(t *testing.T) {
	store := newStore(t)
	m := NewMonitor(settings("gw"), store, newFakeNet(t), nil, nil)
	saving, release := make(chan struct{}), make(chan struct{})
	m.save = func() error {
		saving <- struct{}{}
		<-release
		return store.Save()
	}
	created := make(chan error, 2)
	go func() { _, err := m.Create("farvel"); created <- err }()
	<-saving // the first save has begun and is held

	read := make(chan []string, 1)
	go func() {
		m.view()
		m.Entries()
		m.Handle(false, []byte{0}, netip.MustParseAddr("127.0.0.1"), time.Now())
		read <- m.Hosts()
	}()
	select {
	case hosts := <-read:
		if !slices.Equal(hosts, []string{"gw"}) {
			t.Errorf("hosts %v while farvel is being saved, want [gw]: a host is measured once it is saved", hosts)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read waited for the save in progress")
	}

	go func() { _, err := m.Create("nochmal"); created <- err }()
	select {
	case <-saving:
		t.Fatal("a second change saved while the first save was in progress")
	case <-time.After(50 * time.Millisecond): // a bound for a thing that must not happen
	}
	close(release)
	<-saving
	for range 2 {
		if err := <-created; err != nil {
			t.Fatal(err)
		}
	}
	num, err := spmi.LoadNumbering(store.num.File())
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := OpenStore(num)
	if got := saved.Referenced(); !slices.Equal(got, []string{"farvel", "nochmal"}) {
		t.Errorf("saved hosts %v, want both", got)
	}
}
