package dds

import (
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// The registry's bounds per user and its reservations, on suppliers that
// are only registry entries: the accounting, without sockets or files.

const nobody = 65534

// shareRegistry is a registry of at most maxSup suppliers and maxAll
// statistics, perUID a user's share of the statistics.
func shareRegistry(t *testing.T, maxSup, maxAll, perUID int, reserve ...Reservation) *registry {
	t.Helper()
	lim, err := ddswire.Limits{}.Norm()
	if err != nil {
		t.Fatal(err)
	}
	r := newRegistry(maxSup, lim)
	r.maxAll = maxAll
	r.share.maxStats, r.share.maxSups = perUID, maxSup
	r.share.reserve = newReservations(reserve)
	return r
}

// shareInit registers DDS/<vendor>/<cx> with n statistics, and a
// template of tmpl statistics; the context's number follows its name.
func shareInit(vendor string, vasn uint32, cx string, n, tmpl int) *ddswire.Init {
	stats := func(k int) []ddswire.Stat {
		out := make([]ddswire.Stat, k)
		for i := range out {
			out[i] = ddswire.Stat{Name: fmt.Sprintf("v%d", i+1), Descr: "value", Max: 100, ValType: ddswire.SiCounter,
				DataType: ddswire.SiLong, ASN: uint32(i + 1), Size: 8, Offset: uint32(8 * i), Type: ddswire.SiULong}
		}
		return out
	}
	vp := "DDS/" + vendor
	in := &ddswire.Init{Version: ddswire.ProtoMajor, Generation: 1, File: "/shm/" + vendor, AreaLen: uint32(8*(n+tmpl)) + 64, PermLen: uint32(8 * n), Contexts: []ddswire.Cx{
		{Path: vp, Descr: vendor, ASN: vasn},
		{Path: vp + "/" + cx, Descr: cx, ASN: 1 + crc32.ChecksumIEEE([]byte(cx))%1000000, Stats: stats(n)},
	}}
	if tmpl > 0 {
		in.Templates = []ddswire.Cx{{Path: vp + "/T", Descr: "template", ASN: 1, DataSize: uint32(8 * tmpl), Stats: stats(tmpl)}}
	}
	return in
}

// regSup is a registry entry of peer p; its area is plain memory, so
// AddCx works too.
func regSup(in *ddswire.Init, p unixsock.Peer) *supplier {
	v, err := ddswire.CheckInit(in, ddswire.Limits{})
	if err != nil {
		panic(err)
	}
	l := ddswire.Layout{AreaOff: ddswire.HeaderSize, AreaLen: in.AreaLen, PermLen: in.PermLen}
	return &supplier{peer: p, init: in, vendor: v, slots: NewSlots(in.PermLen, in.AreaLen),
		mem: ddswiretest.Aligned(ddswire.HeaderSize + int(in.AreaLen)), layout: l}
}

func asUID(u uint32) unixsock.Peer { return unixsock.Peer{UID: u, GID: u} }

func (r *registry) statsOf(u uint32) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.share.stats[u]
}

// One user filling its share of dds.max_stats_all leaves the rest for
// root and for other users; its refusal says what it holds, who it is
// and the limit. Root is bounded by the total only, which still holds.
func TestEachUserGetsAShareOfTheStatistics(t *testing.T) {
	r := shareRegistry(t, 100, 100, 25)
	for i := range 2 {
		if _, err := r.add(regSup(shareInit(fmt.Sprint("N", i), uint32(100+i), "C", 12, 0), asUID(nobody))); err != nil {
			t.Fatalf("nobody's supplier %d within its share: %v", i, err)
		}
	}
	_, err := r.add(regSup(shareInit("N2", 102, "C", 2, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "the suppliers of uid 65534 hold 24 statistics", "2 more would make 26",
		"the share of one user, 25", "dds.max_stats_per_uid")
	if _, err := r.add(regSup(shareInit("N3", 103, "C", 1, 0), asUID(nobody))); err != nil {
		t.Fatalf("nobody's share exactly: %v", err)
	}
	if _, err := r.add(regSup(shareInit("Other", 200, "C", 25, 0), asUID(1001))); err != nil {
		t.Fatalf("another user's supplier while nobody's share is full: %v", err)
	}
	rootSup := regSup(shareInit("Root", 300, "C", 40, 0), asUID(0))
	if _, err := r.add(rootSup); err != nil {
		t.Fatalf("root's supplier, above one user's share: %v", err)
	}
	// 90 of 100 now: root's next is refused by the total, which names
	// those holding the most.
	_, err = r.add(regSup(shareInit("Root2", 301, "C", 11, 0), asUID(0)))
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "11 more statistics would make 101", "limit of 100 (dds.max_stats_all)",
		"held by uid 0 (40), uid 1001 (25), uid 65534 (25)")
	r.remove(rootSup)
	if n := r.statsOf(0); n != 0 {
		t.Fatalf("root holds %d statistics after its supplier left", n)
	}
	if _, err := r.add(regSup(shareInit("Root2", 301, "C", 11, 0), asUID(0))); err != nil {
		t.Fatalf("root's supplier after room came back: %v", err)
	}
}

// Volatile contexts count against the share of the user whose supplier
// adds them, and deleting one gives its room back.
func TestAddCxCountsAgainstTheShare(t *testing.T) {
	r := shareRegistry(t, 100, 100, 10)
	s := regSup(shareInit("N", 100, "C", 4, 3), asUID(nobody))
	if _, err := r.add(s); err != nil {
		t.Fatal(err)
	}
	var offs []uint32
	for i := range 2 {
		off, err := r.addCx(s, &ddswire.AddCx{Ix: 0, Path: fmt.Sprintf("DDS/N/i%d", i), Descr: "instance", ASN: uint32(10 + i)})
		if err != nil {
			t.Fatalf("instance %d within the share: %v", i, err)
		}
		offs = append(offs, off)
	}
	_, err := r.addCx(s, &ddswire.AddCx{Ix: 0, Path: "DDS/N/i2", Descr: "instance", ASN: 12})
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "AddCx DDS/N/i2", "uid 65534 hold 10", "dds.max_stats_per_uid")
	if err := r.delCx(s, offs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.addCx(s, &ddswire.AddCx{Ix: 0, Path: "DDS/N/i2", Descr: "instance", ASN: 12}); err != nil {
		t.Fatalf("instance after a delete: %v", err)
	}
	if n := r.statsOf(nobody); n != 10 {
		t.Fatalf("nobody holds %d statistics, want 10", n)
	}
}

// The daemon's own user, like root, is bounded by the totals only;
// everyone else by the share of suppliers too.
func TestOwnersAreBoundedByTheTotalsOnly(t *testing.T) {
	r := shareRegistry(t, 4, 100, 10)
	r.share.maxSups = 1
	r.share.owners = unixsock.Owners().With([]uint32{4242}, nil) // as if the daemon ran as uid 4242
	if _, err := r.add(regSup(shareInit("D", 100, "C", 30, 0), asUID(4242))); err != nil {
		t.Fatalf("the daemon's user above one user's share: %v", err)
	}
	if _, err := r.add(regSup(shareInit("N", 101, "C", 1, 0), asUID(nobody))); err != nil {
		t.Fatal(err)
	}
	_, err := r.add(regSup(shareInit("N2", 102, "C", 1, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "uid 65534 has 1 suppliers registered", "dds.max_suppliers_per_uid")
	for i := range 2 {
		if _, err := r.add(regSup(shareInit(fmt.Sprint("R", i), uint32(200+i), "C", 1, 0), asUID(0))); err != nil {
			t.Fatalf("root's supplier %d: %v", i, err)
		}
	}
	_, err = r.add(regSup(shareInit("R9", 209, "C", 1, 0), asUID(0)))
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "4 suppliers registered", "dds.max_suppliers", "held by uid 0 (2)")
}

// A reserved vendor name is refused to everyone else, whoever came
// first, with the reservation named; its users and the owners get it.
func TestReservedVendor(t *testing.T) {
	r := shareRegistry(t, 100, 1000, 100,
		Reservation{Context: "DDS/RootVendor", ASN: 4242, UIDs: []uint32{1001}},
		Reservation{Context: "DDS/Shared/Web", GIDs: []uint32{990}})
	_, err := r.add(regSup(shareInit("RootVendor", 4242, "App", 1, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "Init: context DDS/RootVendor is reserved for root and the daemon's own user, uid 1001 (dds.reserve[0])",
		"uid 65534 may not register it")
	// Its enterprise number under another name, which would block it too.
	_, err = r.add(regSup(shareInit("Squat", 4242, "App", 1, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "enterprise number 4242 is reserved for DDS/RootVendor", "dds.reserve[0]")
	for _, u := range []uint32{0, 1001} {
		if _, err := r.add(regSup(shareInit("RootVendor", 4242, fmt.Sprint("App", u), 1, 0), asUID(u))); err != nil {
			t.Fatalf("uid %d registering the vendor reserved for it: %v", u, err)
		}
	}
	// Joining the vendor context root made is refused as well.
	_, err = r.add(regSup(shareInit("RootVendor", 4242, "Evil", 1, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "dds.reserve[0]")

	// A subtree: the vendor is shared, the subtree is the group's.
	if _, err := r.add(regSup(shareInit("Shared", 500, "Mail", 1, 0), asUID(nobody))); err != nil {
		t.Fatalf("an unreserved context of a vendor with a reserved subtree: %v", err)
	}
	_, err = r.add(regSup(shareInit("Shared", 500, "Web", 1, 0), asUID(nobody)))
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "context DDS/Shared/Web is reserved for root and the daemon's own user, members of gid 990 (dds.reserve[1])")
	member := unixsock.Peer{UID: 1002, GID: 100, Groups: []uint32{990}}
	web := regSup(shareInit("Shared", 500, "Web", 1, 3), member)
	if _, err := r.add(web); err != nil {
		t.Fatalf("a supplementary member of the reserved group: %v", err)
	}
	// "Webmail" is not under "Web": names match whole components.
	if _, err := r.add(regSup(shareInit("Shared", 500, "Webmail", 1, 0), asUID(nobody))); err != nil {
		t.Fatalf("a name that only starts like the reserved one: %v", err)
	}
	// AddCx into the reserved subtree: nobody cannot, even under its own
	// context (a template of its own, into the reserved path).
	n := regSup(shareInit("Shared", 500, "Other", 1, 3), asUID(nobody))
	if _, err := r.add(n); err != nil {
		t.Fatal(err)
	}
	if _, err := r.addCx(n, &ddswire.AddCx{Ix: 0, Path: "DDS/Shared/Other/x", Descr: "x", ASN: 7}); err != nil {
		t.Fatalf("AddCx outside the reservation: %v", err)
	}
	_, err = r.addCx(n, &ddswire.AddCx{Ix: 0, Path: "DDS/Shared/Web/x", Descr: "x", ASN: 7})
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "AddCx: context DDS/Shared/Web is reserved", "dds.reserve[1]")
	if _, err := r.addCx(web, &ddswire.AddCx{Ix: 0, Path: "DDS/Shared/Web/x", Descr: "x", ASN: 7}); err != nil {
		t.Fatalf("the group member's AddCx in its subtree: %v", err)
	}
}

// Unreserved names stay first come, first served, as before.
func TestUnreservedNamesFirstComeFirstServed(t *testing.T) {
	r := shareRegistry(t, 100, 1000, 100, Reservation{Context: "DDS/RootVendor"})
	if _, err := r.add(regSup(shareInit("Free", 600, "App", 1, 0), asUID(nobody))); err != nil {
		t.Fatal(err)
	}
	_, err := r.add(regSup(shareInit("Free", 600, "App", 1, 0), asUID(0)))
	ddswiretest.WantErr(t, err, spmierr.SiDuplicate, "context DDS/Free/App already exists")
}

func TestCheckReservations(t *testing.T) {
	for _, tc := range []struct {
		rs   []Reservation
		want string
	}{
		{[]Reservation{{Context: "RootVendor"}}, `dds.reserve[0].context: context path "RootVendor" is not under DDS/<vendor>`},
		{[]Reservation{{Context: "DDS"}}, `dds.reserve[0].context: context path "DDS" is not under DDS/<vendor>`},
		{[]Reservation{{Context: "DDS/a/../b"}}, `dds.reserve[0].context`},
		{[]Reservation{{Context: "DDS/A"}, {Context: "DDS/A"}}, "dds.reserve[1].context: DDS/A is reserved already by dds.reserve[0]"},
		{[]Reservation{{Context: "DDS/A/B", ASN: 7}}, "dds.reserve[0].asn: DDS/A/B is not a vendor context"},
		{[]Reservation{{Context: "DDS/A", ASN: 7}, {Context: "DDS/B", ASN: 7}}, "dds.reserve[1].asn: 7 is reserved already by dds.reserve[0]"},
	} {
		err := CheckReservations(tc.rs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.rs, err, tc.want)
		}
	}
	if err := CheckReservations([]Reservation{{Context: "DDS/A", ASN: 7}, {Context: "DDS/A/B"}}); err != nil {
		t.Errorf("a vendor and a subtree of it: %v", err)
	}
}

// Zero shares are a quarter of the totals; a share above its total is
// refused.
func TestShareDefaults(t *testing.T) {
	c, err := ServerConfig{Socket: "/x/dds.sock"}.Norm()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxStatsPerUID != DefaultMaxStatsAll/4 || c.MaxSuppliersPerUID != DefaultMaxSuppliers/4 {
		t.Fatalf("default shares %d statistics, %d suppliers", c.MaxStatsPerUID, c.MaxSuppliersPerUID)
	}
	if c, _ := (ServerConfig{Socket: "/x/dds.sock", MaxStatsAll: 3, MaxSuppliers: 2}).Norm(); c.MaxStatsPerUID != 1 || c.MaxSuppliersPerUID != 1 {
		t.Fatalf("shares of small totals %d, %d; want at least 1", c.MaxStatsPerUID, c.MaxSuppliersPerUID)
	}
	if _, err := (ServerConfig{Socket: "/x/dds.sock", MaxStatsAll: 10, MaxStatsPerUID: 11}).Norm(); err == nil {
		t.Fatal("a share above the total accepted")
	}
}

// A refusal at a total names the three users holding the most.
func TestTopHolders(t *testing.T) {
	if got, want := top(map[uint32]int{4: 1, 2: 5, 1: 5, 3: 2}), "; held by uid 1 (5), uid 2 (5), uid 3 (2), 1 more user"; got != want {
		t.Errorf("top: %q, want %q", got, want)
	}
	if got := top(nil); got != "" {
		t.Errorf("top of nobody: %q", got)
	}
}
