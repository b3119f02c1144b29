package peercred

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOfNamesThisProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cr, err := Of(s)
	if err != nil {
		t.Fatal(err)
	}
	if int(cr.Pid) != os.Getpid() || int(cr.Uid) != os.Geteuid() || int(cr.Gid) != os.Getegid() {
		t.Fatalf("peer %+v, want pid %d uid %d gid %d", cr, os.Getpid(), os.Geteuid(), os.Getegid())
	}
}

func TestListed(t *testing.T) {
	cr := &unix.Ucred{Uid: 1000, Gid: 50}
	for _, tc := range []struct {
		uids, gids []uint32
		want       bool
	}{
		{nil, nil, false},
		{[]uint32{1000}, nil, true},
		{[]uint32{1}, []uint32{50}, true},
		{[]uint32{1}, []uint32{51}, false},
	} {
		if got := Listed(cr, tc.uids, tc.gids); got != tc.want {
			t.Errorf("Listed(uids %v, gids %v) = %v, want %v", tc.uids, tc.gids, got, tc.want)
		}
	}
}
