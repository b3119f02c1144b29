package armring

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Name limits from the PTX guide: the key (the context's short name) is the
// name without blanks, cut to 31 bytes; the description is the name's
// first 63 bytes.
const (
	MaxKey    = 31
	MaxDescr  = 63
	MaxDetail = 127
	MaxMetric = 43 // a metric name: 44 bytes with its NUL
	MaxName   = 127
)

// Key turns an application or transaction name into its key: blanks
// removed, characters a context name cannot hold ('/', controls) replaced
// by '_', invalid UTF-8 dropped, cut to 31 bytes on a character boundary.
func Key(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == ' ' || r == '\t':
			continue
		case r == utf8.RuneError:
			continue
		case r == '/' || r < ' ' || r == 0x7f:
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > MaxKey {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Descr cuts text to n bytes on a character boundary, with control
// characters replaced by blanks and invalid UTF-8 dropped.
func Descr(text string, n int) string {
	var b strings.Builder
	for _, r := range text {
		if r == utf8.RuneError {
			continue
		}
		if r < ' ' || r == 0x7f {
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > n {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkKey accepts only what Key produces.
func checkKey(what, k string) error {
	if k == "" {
		return fmt.Errorf("%s: empty key", what)
	}
	if Key(k) != k {
		return fmt.Errorf("%s: key %q is not a key (blanks, '/', control characters, invalid UTF-8 or over %d bytes)", what, k, MaxKey)
	}
	return nil
}

func checkText(what, s string, n int) error {
	if Descr(s, n) != s {
		return fmt.Errorf("%s: %q has control characters, invalid UTF-8 or is over %d bytes", what, s, n)
	}
	return nil
}

// cstr reads a NUL-padded field: the bytes before the first NUL.
func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// putCstr writes s NUL-padded into b; s must be shorter than b.
func putCstr(b []byte, s string) {
	n := copy(b[:len(b)-1], s)
	clear(b[n:])
}
