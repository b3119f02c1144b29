package spmi

import (
	"testing"
	"time"
)

func TestSharedReadsOncePerBuilder(t *testing.T) {
	reads := 0
	read := func() (int, error) { reads++; return 42, nil }
	b := NewBuilder(testBase, nil, time.Now())
	for i := 0; i < 3; i++ {
		if v, err := Shared(b, "/proc/stat", read); v != 42 || err != nil {
			t.Fatalf("%v %v", v, err)
		}
	}
	if _, err := Shared(b, "/proc/stat", func() (string, error) { return "", nil }); err == nil {
		t.Fatal("a source read as two types is an error")
	}
	Shared(NewBuilder(testBase, nil, time.Now()), "/proc/stat", read)
	if reads != 2 {
		t.Fatalf("%d reads for two builders", reads)
	}
}
