package notiflog

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

var extBase = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 111}

// typedLog holds two entries, the second with one VarBind of every kind
// the daemon sends, Counter64 and OBJECT IDENTIFIER included.
func typedLog(t testing.TB) (*Log, *clock) {
	t.Helper()
	c := &clock{time.Date(2026, 11, 28, 17, 5, 9, 300_000_000, time.UTC)}
	l, err := Open(filepath.Join(t.TempDir(), File), 10, 2*time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(l, "first")
	vals := []asn1tree.Value{
		{Kind: asn1tree.Counter32, Num: 7}, asn1tree.Gauge(8), {Kind: asn1tree.TimeTicks, Num: 9}, asn1tree.Int(-10),
		asn1tree.Str("pump\x00"), {Kind: asn1tree.ObjectIdentifier, OID: asn1tree.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}},
		asn1tree.Counter(1 << 40),
	}
	oids := make([]asn1tree.OID, len(vals))
	for i := range oids {
		oids[i] = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, uint32(i + 1), 0}
	}
	l.Add(1234*time.Millisecond, trapOID, vals, oids)
	l.Outcome(2, "v2c trap 127.0.0.1:162", true, "sent")
	l.Outcome(2, "v2c inform 127.0.0.1:1162", false, Pending)
	l.Outcome(2, "master", false, "failed: not connected")
	return l, c
}

func mustGet(t *testing.T, v asn1tree.View, oid string) asn1tree.Value {
	t.Helper()
	val, ok := v.Get(asn1tree.MustParse(oid))
	if !ok {
		t.Fatalf("%s: not served", oid)
	}
	return val
}

// Every object at RFC 3014's OID with its SYNTAX: the default log "" is
// index 0, an entry 0.<index>, a VarBind 0.<index>.<n>; each VarBind's
// value is in the one column of its type.
func TestMIBServesRFC3014Objects(t *testing.T) {
	l, _ := typedLog(t)
	m := &MIB{L: l, Ext: extBase}
	v := m.View()
	type want struct {
		oid string
		val asn1tree.Value
	}
	c32 := func(n uint64) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.Counter32, Num: n} }
	oidv := func(s string) asn1tree.Value {
		return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.MustParse(s)}
	}
	for _, w := range []want{
		{"1.3.6.1.2.1.92.1.1.1.0", asn1tree.Gauge(10)},     // nlmConfigGlobalEntryLimit
		{"1.3.6.1.2.1.92.1.1.2.0", asn1tree.Gauge(120)},    // nlmConfigGlobalAgeOut, minutes
		{"1.3.6.1.2.1.92.1.1.3.1.2.0", asn1tree.Str("")},   // nlmConfigLogFilterName.""
		{"1.3.6.1.2.1.92.1.1.3.1.3.0", asn1tree.Gauge(10)}, // nlmConfigLogEntryLimit.""
		{"1.3.6.1.2.1.92.1.1.3.1.4.0", asn1tree.Int(1)},    // enabled
		{"1.3.6.1.2.1.92.1.1.3.1.5.0", asn1tree.Int(2)},    // operational
		{"1.3.6.1.2.1.92.1.1.3.1.7.0", asn1tree.Int(1)},    // active
		{"1.3.6.1.2.1.92.1.2.1.0", c32(2)},                 // nlmStatsGlobalNotificationsLogged
		{"1.3.6.1.2.1.92.1.2.2.0", c32(0)},                 // nlmStatsGlobalNotificationsBumped
		{"1.3.6.1.2.1.92.1.2.3.1.1.0", c32(2)},             // nlmStatsLogNotificationsLogged.""
		{"1.3.6.1.2.1.92.1.3.1.1.2.0.2", asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 123}},
		{"1.3.6.1.2.1.92.1.3.1.1.3.0.2", asn1tree.Str("\x07\xea\x0b\x1c\x11\x05\x09\x03+\x00\x00")},
		{"1.3.6.1.2.1.92.1.3.1.1.4.0.2", asn1tree.Str("")},
		{"1.3.6.1.2.1.92.1.3.1.1.6.0.2", oidv("0.0")},
		{"1.3.6.1.2.1.92.1.3.1.1.9.0.2", oidv(trapOID.String())},
		{"1.3.6.1.2.1.92.1.3.2.1.2.0.2.7", oidv("1.3.6.1.4.1.32473.1.14.0.7.0")},
		{"1.3.6.1.2.1.92.1.3.2.1.3.0.2.1", asn1tree.Int(1)},   // counter32
		{"1.3.6.1.2.1.92.1.3.2.1.4.0.2.1", c32(7)},            // nlmLogVariableCounter32Val
		{"1.3.6.1.2.1.92.1.3.2.1.3.0.2.2", asn1tree.Int(2)},   // unsigned32
		{"1.3.6.1.2.1.92.1.3.2.1.5.0.2.2", asn1tree.Gauge(8)}, // nlmLogVariableUnsigned32Val
		{"1.3.6.1.2.1.92.1.3.2.1.6.0.2.3", asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 9}},
		{"1.3.6.1.2.1.92.1.3.2.1.3.0.2.4", asn1tree.Int(4)},
		{"1.3.6.1.2.1.92.1.3.2.1.7.0.2.4", asn1tree.Int(-10)},
		{"1.3.6.1.2.1.92.1.3.2.1.8.0.2.5", asn1tree.Str("pump\x00")},
		{"1.3.6.1.2.1.92.1.3.2.1.3.0.2.6", asn1tree.Int(7)}, // objectId
		{"1.3.6.1.2.1.92.1.3.2.1.10.0.2.6", oidv("1.3.6.1.2.1.1.3.0")},
		{"1.3.6.1.2.1.92.1.3.2.1.3.0.2.7", asn1tree.Int(8)}, // counter64
		{"1.3.6.1.2.1.92.1.3.2.1.11.0.2.7", asn1tree.Counter(1 << 40)},
		{extBase.String() + ".1.1.3.0.2", asn1tree.Gauge(1)}, // delivered
		{extBase.String() + ".1.1.4.0.2", asn1tree.Gauge(1)}, // failed
		{extBase.String() + ".1.1.5.0.2", asn1tree.Gauge(1)}, // pending
		{extBase.String() + ".1.1.7.0.2", asn1tree.Str("v2c trap 127.0.0.1:162: sent; v2c inform 127.0.0.1:1162: pending; master: failed: not connected")},
	} {
		got := mustGet(t, v, w.oid)
		if got.Kind != w.val.Kind || got.Num != w.val.Num || got.Str != w.val.Str || !got.OID.Equal(w.val.OID) {
			t.Errorf("%s = %v %v, want %v %v", w.oid, got.Kind, got, w.val.Kind, w.val)
		}
	}
	// A VarBind has its type's value column only.
	for _, col := range []int{4, 5, 6, 7, 8, 9, 10, 12} {
		if _, ok := v.Get(asn1tree.MustParse("1.3.6.1.2.1.92.1.3.2.1." + itoa(col) + ".0.2.7")); ok {
			t.Errorf("the Counter64 VarBind has a value in column %d too", col)
		}
	}
	// Not-accessible index objects are not served.
	for _, o := range []string{"1.3.6.1.2.1.92.1.3.1.1.1.0.2", "1.3.6.1.2.1.92.1.3.2.1.1.0.2.1", "1.3.6.1.2.1.92.1.1.3.1.1.0"} {
		if _, ok := v.Get(asn1tree.MustParse(o)); ok {
			t.Errorf("%s (not-accessible) is served", o)
		}
	}
}

func itoa(n int) string { return asn1tree.OID{uint32(n)}.String() }

// A walk (GetNext after GetNext) visits the module in OID order: the
// columns of nlmLogTable one after the other, rows by index within them,
// then the VarBinds, and ends at the end of the module.
func TestMIBWalkOrder(t *testing.T) {
	l, _ := typedLog(t)
	v := (&MIB{L: l}).View()
	var got []string
	o := NLM
	for i := 0; i < 500; i++ {
		next, _, ok := v.Search(o, false, asn1tree.OID{1, 3, 6, 1, 2, 1, 93})
		if !ok {
			break
		}
		got = append(got, next.String())
		o = next
	}
	if len(got) != 4+6+2+2*8+(2+7)*3 {
		t.Errorf("walk visited %d objects:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i := 1; i < len(got); i++ {
		if asn1tree.Compare(asn1tree.MustParse(got[i-1]), asn1tree.MustParse(got[i])) >= 0 {
			t.Fatalf("walk out of order at %s, %s", got[i-1], got[i])
		}
	}
	at := func(s string) int {
		for i, g := range got {
			if g == s {
				return i
			}
		}
		t.Fatalf("%s not walked", s)
		return -1
	}
	if !(at("1.3.6.1.2.1.92.1.3.1.1.2.0.1") < at("1.3.6.1.2.1.92.1.3.1.1.2.0.2") &&
		at("1.3.6.1.2.1.92.1.3.1.1.2.0.2") < at("1.3.6.1.2.1.92.1.3.1.1.3.0.1")) {
		t.Errorf("nlmLogTime of both rows does not come before nlmLogDateAndTime")
	}
}

// The view is indexed again when the log changes, and only then:
// readers between two changes share one; a view a walk holds does not
// change under it.
func TestMIBRebuildsOnChangeOnly(t *testing.T) {
	l, c := typedLog(t)
	m := &MIB{L: l}
	a, b := m.current(), m.current()
	if a != b {
		t.Fatal("two reads of an unchanged log indexed it twice")
	}
	held := m.View()
	mustGet(t, held, "1.3.6.1.2.1.92.1.3.1.1.9.0.2")
	c.t = c.t.Add(time.Second)
	add(l, "third")
	if n := m.current(); n == a {
		t.Fatal("a read after Add serves the old view")
	}
	mustGet(t, m.View(), "1.3.6.1.2.1.92.1.3.1.1.9.0.3")
	if _, ok := held.Get(asn1tree.MustParse("1.3.6.1.2.1.92.1.3.1.1.9.0.3")); ok {
		t.Error("the view a walk holds changed under it")
	}
	// A request for other objects does not index the log.
	add(l, "fourth")
	other := m.View()
	if _, _, ok := other.Search(asn1tree.MustParse("1.3.6.1.4.1.32473.1.1"), false, asn1tree.MustParse("1.3.6.1.4.1.32473.1.2")); ok {
		t.Error("a search below the base found a cell of the log")
	}
	if _, ok := other.Get(asn1tree.MustParse("1.3.6.1.4.1.32473.1.1.1.4.0")); ok {
		t.Error("a Get below the base found a cell of the log")
	}
	if m.cur.Load().v.Version == l.Version() {
		t.Error("requests for other objects indexed the log")
	}
}

// Restored entries serve nlmLogTime 0 (RFC 3014); evictions count as
// bumps, age-outs do not.
func TestMIBRestoredAndBumped(t *testing.T) {
	file := filepath.Join(t.TempDir(), File)
	c := &clock{time.Unix(1700000000, 0)}
	l, err := Open(file, 2, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(l, "a")
	add(l, "b")
	add(l, "c") // bumps a
	l.Close()   // a clean stop: the next start goes on at 4
	l2, err := Open(file, 2, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(l2, "d") // bumps b
	v := (&MIB{L: l2}).View()
	if got := mustGet(t, v, "1.3.6.1.2.1.92.1.3.1.1.2.0.3"); got.Kind != asn1tree.TimeTicks || got.Num != 0 {
		t.Errorf("restored entry 3's nlmLogTime %v %v, want TimeTicks 0", got.Kind, got)
	}
	if got := mustGet(t, v, "1.3.6.1.2.1.92.1.3.1.1.2.0.4"); got.Num != 300 {
		t.Errorf("entry 4's nlmLogTime %v, want 300 (3 s)", got)
	}
	if got := mustGet(t, v, "1.3.6.1.2.1.92.1.2.2.0"); got.Kind != asn1tree.Counter32 || got.Num != 1 {
		t.Errorf("nlmStatsGlobalNotificationsBumped %v %v, want Counter32 1 (since this start)", got.Kind, got)
	}
	if _, ok := v.Get(asn1tree.MustParse("1.3.6.1.2.1.92.1.3.1.1.9.0.2")); ok {
		t.Error("bumped entry 2 still served")
	}
}

func TestRegistrations(t *testing.T) {
	sub, exact, prio := Registrations(127)
	if !sub.Equal(asn1tree.MustParse("1.3.6.1.2.1.92")) || prio >= 127 || len(exact) != 6 {
		t.Errorf("Registrations(127) = %s, %v, %d", sub, exact, prio)
	}
	if _, _, p := Registrations(20); p != 20 {
		t.Errorf("a session priority above 100 is lowered to %d", p)
	}
}

// Readers index and read the log while notifications are added (run with
// -race): each view they take stays whole, its walk in order.
func TestMIBConcurrentReadsAndAdds(t *testing.T) {
	l, c := typedLog(t)
	m := &MIB{L: l, Ext: extBase}
	done := make(chan struct{})
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				v := m.View()
				o := NLM
				for k := 0; k < 50; k++ {
					next, _, ok := v.Search(o, false, nil)
					if !ok {
						break
					}
					if asn1tree.Compare(next, o) <= 0 {
						errs <- "walk went backwards at " + next.String()
						return
					}
					o = next
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		c.t = c.t.Add(time.Second)
		add(l, "more")
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A reload's new limits are served at once, though SetLimits drops no
// entry (and so leaves the Version as it was).
func TestMIBServesNewLimits(t *testing.T) {
	l, _ := typedLog(t)
	m := &MIB{L: l}
	mustGet(t, m.View(), "1.3.6.1.2.1.92.1.1.1.0")
	if err := l.SetLimits(300, 5*time.Hour); err != nil {
		t.Fatal(err)
	}
	v := m.View()
	if got := mustGet(t, v, "1.3.6.1.2.1.92.1.1.1.0"); got.Num != 300 {
		t.Errorf("nlmConfigGlobalEntryLimit %v after SetLimits(300), want 300", got)
	}
	if got := mustGet(t, v, "1.3.6.1.2.1.92.1.1.2.0"); got.Num != 300 {
		t.Errorf("nlmConfigGlobalAgeOut %v after SetLimits(5h), want 300 minutes", got)
	}
}
