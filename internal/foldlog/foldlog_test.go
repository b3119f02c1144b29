package foldlog

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// Lines without a source share one bound; each reason's next line, a
// minute on, counts what was held back; the source's attributes come first.
func TestNoteFoldsBySourceAndReason(t *testing.T) {
	lb := &testutil.Buffer{}
	l := New(slog.New(slog.NewTextHandler(lb, nil)), slog.LevelInfo)
	now := time.Unix(1000, 0)
	l.Now = func() time.Time { return now }
	for i := range 1000 {
		l.Note(Source{}, "refused", fmt.Sprintf("r%d", i%20), "i", i)
	}
	if n := strings.Count(lb.String(), "msg=refused"); n != MaxLines {
		t.Errorf("1000 events of 20 reasons: %d lines, want %d", n, MaxLines)
	}
	now = now.Add(Every)
	l.Note(Source{}, "refused", "r0", "i", 1000)
	if !strings.Contains(lb.String(), "reason=r0 count=50 i=1000") {
		t.Errorf("a minute on, r0's line lacks its count:\n%s", testutil.Tail(lb.String(), 2))
	}
	l.Note(Source{ID: 5, Attrs: []any{"uid", 5}}, "refused", "r0")
	if !strings.Contains(lb.String(), "msg=refused uid=5 reason=r0 count=1") {
		t.Errorf("another source's line:\n%s", testutil.Tail(lb.String(), 1))
	}
	if lvl := "level=INFO"; strings.Count(lb.String(), lvl) != MaxLines+2 {
		t.Errorf("lines not at INFO:\n%s", lb)
	}
}

func TestKindDropsFileNames(t *testing.T) {
	pe := &fs.PathError{Op: "open", Path: "/s/.f.tmp-1234", Err: syscall.ENOSPC}
	for _, err := range []error{pe, fmt.Errorf("writing /s/f: %w", pe), syscall.ENOSPC} {
		if k := Kind(err); k != "no space left on device" {
			t.Errorf("Kind(%v) = %q", err, k)
		}
	}
	if k := Kind(errors.New("plain")); k != "plain" {
		t.Errorf("Kind of a plain error: %q", k)
	}
}

func TestTextCutsAtACharacter(t *testing.T) {
	s := strings.Repeat("é", 150) // 300 bytes, 2 each
	got := Text(s)
	if !strings.HasPrefix(got, strings.Repeat("é", 100)+"…(100 more bytes)") {
		t.Errorf("Text of 150 é: %q", got)
	}
	if Text("short") != "short" {
		t.Error("short text changed")
	}
}
