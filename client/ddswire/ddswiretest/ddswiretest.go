// Package ddswiretest is for tests only: the fixtures the tests of ddswire
// (this module) and of the daemon's dds share: the SPMI guide's
// registration (GuideInit), a valid shared file for it (GoodFile,
// GoodExpect), an aligned buffer as a mapping gives, the byte order and
// frame head of the formats, and the check of an *spmierr.Error. It lives
// here, exported, so that both modules use one copy (the daemon's module
// can import the client module, not the other way round). It imports the
// standard library, ddswire and spmierr only; only tests import it.
package ddswiretest

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// LE is the byte order of the file and wire formats.
var LE = binary.LittleEndian

// FrameHead is the length of a frame's head (length, type, reserved); the
// tests of ddswire's encoder pin it.
const FrameHead = 8

// GoodPID and GoodStart are the process that created GoodFile and its
// start time.
const (
	GoodPID   = 4242
	GoodStart = 987654
)

// GuideInit is the guide's SpmiSupl.c registration as its C library would
// send it on amd64: struct dat of four 8-byte u_longs, struct inst of a
// float and a u_long.
func GuideInit() *ddswire.Init {
	st := func(name, descr string, vt ddswire.ValType, asn, off uint32) ddswire.Stat {
		return ddswire.Stat{Name: name, Descr: descr, Min: 0, Max: 100, ValType: vt, DataType: ddswire.SiLong, ASN: asn, Size: 8, Offset: off, Type: ddswire.SiULong}
	}
	return &ddswire.Init{
		Version: ddswire.ProtoMajor, AreaLen: 65536, PermLen: 32, Generation: 0x1234_5678_9abc_def0,
		File: "/etc/SpmiSupl_hook",
		Contexts: []ddswire.Cx{
			{Path: "DDS/IBM", Descr: "IBM-defined Dynamic Data-Suppliers", ASN: 2},
			{Path: "DDS/IBM/Test", Descr: "Bogus Context Number 1", ASN: 220, Stats: []ddswire.Stat{
				st("gadgets", "Fake counter value", ddswire.SiCounter, 1, 0),
				st("widgets", "Another fake counter value", ddswire.SiCounter, 2, 8),
			}},
			{Path: "DDS/IBM/Moretest", Descr: "Bogus Context Number 2", ASN: 221},
			{Path: "DDS/IBM/Moretest/SubTest", Descr: "Bogus Context Number 3", ASN: 222, Stats: []ddswire.Stat{
				st("level", "Fake quantity value", ddswire.SiQuantity, 1, 16),
				st("queue", "Another fake quantity value", ddswire.SiQuantity, 2, 24),
			}},
		},
		Templates: []ddswire.Cx{
			{Path: "DDS/IBM/Moretest/INST1", Descr: "Instantiable Context Number 1", ASN: 215, DataSize: 16, Stats: []ddswire.Stat{
				{Name: "problems", Descr: "Fake counter value", Max: 100, DataType: ddswire.SiLong, ASN: 1, Size: 4, Offset: 0, Type: ddswire.SiLong},
				{Name: "solutions", Descr: "Another fake counter value", Max: 100, DataType: ddswire.SiLong, ASN: 2, Size: 8, Offset: 8, Type: ddswire.SiLong},
			}},
		},
	}
}

// GoodFile is a valid shared file for GuideInit, created by process
// GoodPID started at GoodStart.
func GoodFile() []byte {
	in := GuideInit()
	h := ddswire.NewHeader(in.AreaLen, in.PermLen, GoodPID, GoodStart, in.File)
	h.Gen = in.Generation
	b := Aligned(int(h.AllocLen))
	h.Encode(b)
	return b
}

// GoodExpect is what the daemon expects of GoodFile.
func GoodExpect() ddswire.Expect { return ddswire.ExpectFor(GuideInit(), GoodPID, GoodStart) }

// Aligned is an n-byte buffer starting 8-aligned, as a mapping does (a
// []byte from make need not be on 386).
func Aligned(n int) []byte {
	w := make([]uint64, (n+7)/8+1)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// WantErr fails unless err is an *spmierr.Error with code c whose text
// contains every one of subs.
func WantErr(t testing.TB, err error, c spmierr.Code, subs ...string) {
	t.Helper()
	var se *spmierr.Error
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want an %v error", err, c)
	}
	if se.Code != c {
		t.Fatalf("got %v, want code %v", err, c)
	}
	for _, s := range subs {
		if !strings.Contains(se.Msg, s) {
			t.Fatalf("error %q does not mention %q", se.Msg, s)
		}
	}
}
