//go:build linux

package libspmi

import (
	"encoding/binary"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"golang.org/x/sys/unix"
)

// reply is a Reply frame as the daemon writes it.
func reply(to ddswire.MsgType, code int32, value uint64, msg string) []byte {
	r := &ddswire.Reply{To: to, Value: value, Errmsg: msg}
	b, err := ddswire.Marshal(r, ddswire.Limits{})
	if err != nil {
		panic(err)
	}
	binary.LittleEndian.PutUint32(b[8:], uint32(code)) // any code, even unknown ones
	return b
}

// FuzzInitReply feeds the C library's reply decoder whatever a daemon
// might send in answer to Init: it must answer "ok" or "err" with an
// SPMI code, never crash, hang or misread.
func FuzzInitReply(f *testing.F) {
	f.Add(reply(ddswire.MsgInit, 0, 1, ""))
	f.Add(reply(ddswire.MsgInit, 193, 0, "DDS/IBM/Test: duplicate"))
	f.Add(reply(ddswire.MsgAddCx, 0, 1, ""))             // reply to the wrong request
	f.Add(reply(ddswire.MsgInit, 0, 1, "")[:12])         // truncated
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0x81, 0, 0, 0}) // huge length
	f.Add(append(reply(ddswire.MsgInit, 187, 0, strings.Repeat("x", 1023)), 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		run := t.TempDir()
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(run, "dds.sock"), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.AcceptUnix()
			ln.Close() // one connection: a reconnect finds no daemon
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, fds, err := ddswire.RecvMessage(c, ddswire.Limits{}, 5*time.Second); err == nil {
				for _, fd := range fds {
					unix.Close(fd)
				}
			}
			c.Write(b)
		}()
		s := startSup(t, false, run)
		l := s.do("init %s 4096 guide", s.file)
		valid := len(b) >= 26 && binary.LittleEndian.Uint16(b[4:]) == 0x81
		switch {
		case strings.HasPrefix(l, "ok"):
			if !valid || binary.LittleEndian.Uint32(b[8:]) != 0 {
				t.Fatalf("reply %x accepted: %s", b, l)
			}
		case !strings.HasPrefix(l, "err 1"): // every SPMI code is 1xx
			if valid { // a daemon's code is passed on as is
				break
			}
			t.Fatalf("reply %x: %q", b, l)
		}
		if l := s.do("check"); !strings.HasPrefix(l, "ok") && !strings.HasPrefix(l, "err 1") {
			t.Fatalf("check after reply %x: %q", b, l) // still alive and sane
		}
	})
}
