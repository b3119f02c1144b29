package libarm

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"
)

// harness is fuzzbuf built with libarm's sources under AddressSanitizer
// and UBSan, so that an out-of-bounds read of a buffer fails the run.
type harness struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startHarness(t testing.TB) *harness {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fuzzbuf")
	args := append([]string{"-std=c11", "-O1", "-g", "-pthread", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
		"-I.", "-I" + sharedDir, "-o", bin, "testdata/fuzzbuf.c"}, sources()...)
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	c := exec.Command(bin)
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+dir, "ARM_LOGFILE="+filepath.Join(dir, "log"))
	c.Stderr = os.Stderr
	in, _ := c.StdinPipe()
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	h := &harness{cmd: c, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { in.Close(); c.Wait() })
	return h
}

func (h *harness) feed(t *testing.T, op byte, b []byte) {
	var hd [5]byte
	hd[0] = op
	binary.LittleEndian.PutUint32(hd[1:], uint32(len(b)))
	if _, err := h.in.Write(append(hd[:], b...)); err != nil {
		t.Fatalf("harness died: %v", err)
	}
	if c, err := h.out.ReadByte(); err != nil || c != 'k' {
		t.Fatalf("harness failed on op %d buffer %x: %v", op, b, err)
	}
}

// buf returns the bytes of a C struct value.
func buf[T any](v *T) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)) }

type meta struct {
	Format int32
	Flags  [4]byte
	Metric [7]struct {
		Type int32
		Name [44]byte
	}
}

type data1 struct {
	Format  int32
	Flags   [4]byte
	Metric  [6]uint64
	String1 [32]byte
	Corr    [168]byte
}

func FuzzDataBuffers(f *testing.F) {
	m := meta{Format: 101, Flags: [4]byte{0, 0xfe}}
	for i := range m.Metric {
		m.Metric[i].Type = int32(i + 1)
		copy(m.Metric[i].Name[:], "metric")
	}
	m.Metric[6].Type = 10
	f.Add(byte(0), buf(&m))
	d := data1{Format: 1, Flags: [4]byte{0xc0, 0xfe}}
	binary.BigEndian.PutUint16(d.Corr[:], 26)
	d.Corr[2] = 1
	f.Add(byte(1), buf(&d))
	f.Add(byte(2), append([]byte{2, 0, 0, 0}, "status text"...))
	f.Add(byte(3), buf(&d)[:88])
	f.Add(byte(1), []byte{1, 0, 0, 0, 0x80, 0})
	h := startHarness(f)
	f.Fuzz(func(t *testing.T, op byte, b []byte) {
		h.feed(t, op, b)
	})
}
