//go:build linux

package libspmi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jsonCheck is test/jsoncheck.c, the library's JSON reader on stdin.
func jsonCheck(t testing.TB) string {
	t.Helper()
	lib := library(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := programs["jsoncheck"]; ok {
		return p
	}
	p := lib.Internal(t, "jsoncheck", []string{"-std=c11", "-O2", "-I" + filepath.Join(lib.Src, "src", "consumer")},
		filepath.Join(lib.Src, "test", "jsoncheck.c"))
	programs["jsoncheck"] = p
	return p
}

func decodeAll(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// FuzzJSON holds the C reader to encoding/json: it accepts exactly what Go
// accepts (but NUL in strings and nesting deeper than 64, which it
// refuses on purpose), and what it reads is what Go reads.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"peek":[{"path":"CPU/","descr":"Processor statistics","rel":"1","inst":"instantiable at configuration time"}]}`,
		`{"sample":{"Time":"2026-11-23T20:10:40.523962101Z","Items":[{"path":"CPU/cpu0/idle","value":{"u":18446744073709551615}}]}}`,
		`{"err":{"code":188,"msg":"no context \"Nope\"\n\u00e9\ud83d\ude00"}}`,
		`[1,-0,0.5,1e10,-1.5E-3,true,false,null,"",{},[]]`,
		`"\ud800x"`, `"\udc00\ud800"`, `"\u0000"`, `[01]`, `{"a":1,}`, `[1,]`, `"\x"`, `"` + "\x01" + `"`,
		`  {"a" : [ 1 , 2 ] }  `, `{"a":1}{"b":2}`, `-`, `1.`, `.5`, `1e`, `tru`, "\"\xff\xfe\"",
		strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 66) + strings.Repeat("]", 66),
		`{"a":1,"a":2}`, "\"\\",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd := exec.Command(jsonCheck(t))
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("jsoncheck on %q: %v", b, err)
		}
		cErr, refused := strings.CutPrefix(string(out), "err ")
		cOK := !refused
		goOK := json.Valid(b)
		switch {
		case !cOK && goOK:
			// Go reads what the C reader refuses only for its two bounds.
			if !strings.Contains(cErr, "NUL in string") && !strings.Contains(cErr, "nested too deep") {
				t.Fatalf("%q: C refuses valid JSON: %s", b, cErr)
			}
		case cOK && !goOK:
			t.Fatalf("%q: C accepts invalid JSON as %s", b, out)
		case cOK:
			want, err := decodeAll(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(out)
			if err != nil {
				t.Fatalf("%q: C's reading %q does not decode: %v", b, out, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: C read %s, Go %#v", b, out, want)
			}
		}
	})
}

// FuzzConsumerAnswer gives the consumer side whatever a daemon might
// answer (the same line to every request): traversal, statsets and
// hotsets must answer "ok" or an SPMI error, never crash or hang.
func FuzzConsumerAnswer(f *testing.F) {
	for _, s := range []string{
		`{"peek":[{"path":"CPU/","descr":"Processors","rel":"1","inst":"instantiable at configuration time"},{"path":"CPU/cpu0/","descr":"P0","rel":"1.1","instance":true},{"path":"CPU/cpu0/idle","descr":"Idle","rel":"1.1.4","stat":{"Name":"idle","Descr":"Idle time","ASN":4,"Min":0,"Max":100,"Val":0,"Data":0}}]}`,
		`{"sample":{"Time":"2026-11-23T20:10:40.523962101Z","Items":[{"path":"CPU/cpu0/idle","stat":{"Name":"idle","Descr":"Idle time","ASN":4,"Min":0,"Max":100,"Val":0,"Data":0},"value":{"u":8765432}}]}}`,
		`{"sample":{"Time":"2026-11-23T20:10:41+02:00","Items":[{"path":"x","stat":{"Name":"idle","Descr":"","ASN":4,"Min":-9223372036854775808,"Max":9223372036854775807,"Val":1,"Data":1},"value":{"f":1e308}}]}}`,
		`{"id":1,"hot":{"time":"2026-11-23T20:10:40Z","elapsed":1.5,"peer_sets":[{"stat":"CPU/*/idle","groups":[{"parent":"CPU/","avail":4,"items":[{"name":"cpu0","path":"CPU/cpu0/idle","value":3}]},{"parent":"X/","avail":99999,"items":[]}]}]}}`,
		`{"err":{"code":188,"msg":"no"}}`, `{"err":{"code":-1}}`, `{"peek":[{"path":"/"},{"path":""},{"path":"a//b/"}]}`,
		`{}`, `[]`, `null`, `{"sample":{"Time":"x","Items":[]}}`, "", "\x00\x01", `{"peek":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsRune(b, '\n') {
			b = bytes.ReplaceAll(b, []byte("\n"), []byte(" ")) // one answer line
		}
		dir := controlRunDir(t)
		ln, err := net.Listen("unix", filepath.Join(dir, "subagent.sock"))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					c.SetDeadline(time.Now().Add(20 * time.Second))
					sc := bufio.NewScanner(c)
					for sc.Scan() {
						if _, err := c.Write(append(append([]byte{}, b...), '\n')); err != nil {
							return
						}
					}
				}()
			}
		}()
		d := startDriver(t, true, dir)
		for _, cmd := range []string{"init", "walk", "add CPU/cpu0/idle", "read", "read", "hot CPU idle", "hotread", "hotread", "errors", "exit"} {
			l := d.do(cmd)
			if !strings.HasPrefix(l, "ok") && !strings.HasPrefix(l, "err ") {
				t.Fatalf("answer %q: %s: %q", b, cmd, l)
			}
		}
	})
}
