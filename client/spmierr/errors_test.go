package spmierr

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorCodes(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", Errorf(SiDuplicate, "context %q exists", "DDS/IBM"))
	if CodeOf(err) != SiDuplicate || CodeOf(nil) != SiSuccess || CodeOf(errors.New("x")) != SiOtherErr {
		t.Fatalf("CodeOf: %v %v %v", CodeOf(err), CodeOf(nil), CodeOf(errors.New("x")))
	}
	if !errors.Is(err, &Error{Code: SiDuplicate}) || errors.Is(err, &Error{Code: SiNotFound}) {
		t.Fatal("errors.Is does not match on the code alone")
	}
	if got := err.Error(); got != `wrapped: SiDuplicate (193): context "DDS/IBM" exists` {
		t.Fatalf("Error() = %q", got)
	}
	if SiOtherErr.Name() != "SiOtherErr" || Code(5).Name() != "Si5" {
		t.Fatalf("names %q %q", SiOtherErr.Name(), Code(5).Name())
	}
}
