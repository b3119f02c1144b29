//go:build linux

package dds

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

// A supplier truncating its file under the daemon's mapping must cost the
// daemon an error, not a SIGBUS.
func TestTruncatedMappingIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shm")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	good := ddswiretest.GoodFile()
	if _, err := f.Write(good); err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, len(good), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	l, err := ddswire.ValidateFile(mem, ddswiretest.GoodExpect(), ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	area := l.Area(mem)
	fld := ddswire.Field{Off: 8, Size: 8, Type: ddswire.SiULong, Present: ddswire.SiLong}
	if _, err := ReadValue(area, fld); err != nil {
		t.Fatal(err)
	}

	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	_, err = ReadValue(area, fld)
	ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "memory fault", "truncated")
	_, err = ReadValue(area, ddswire.Field{Off: 2, Size: 2, Type: ddswire.SiUShort, Present: ddswire.SiLong})
	ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "memory fault")
	_, err = ddswire.LoadStamp(mem)
	ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "memory fault")
	ddswiretest.WantErr(t, ddswire.SetGoAway(mem), spmierr.SiShmemFailed, "memory fault")
	ddswiretest.WantErr(t, ZeroSlot(area, 64, 64), spmierr.SiShmemFailed, "memory fault")
	_, err = ddswire.ValidateFile(mem, ddswiretest.GoodExpect(), ddswire.Limits{})
	ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "memory fault")

	// Other panics are not swallowed.
	defer func() {
		if r := recover(); r != "not a fault" {
			t.Fatalf("recovered %v", r)
		}
	}()
	func() (err error) {
		defer ddswire.RecoverFault(&err)
		panic("not a fault")
	}()
}
