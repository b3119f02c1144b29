package spmi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/spmierr"
)

// deletable is onReference that can also delete what it created.
type deletable struct{ onReference }

func (d *deletable) Delete(path string) (bool, error) {
	name, ok := strings.CutPrefix(path, "Ref/")
	if !ok {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.Index(d.names, name)
	if i < 0 {
		return false, errors.New("no such reference")
	}
	d.names = slices.Delete(d.names, i, i+1)
	return true, nil
}

func TestDeleteThroughTheOwningProvider(t *testing.T) {
	d := &deletable{}
	h := NewHierarchy(Config{})
	h.Add(d)
	if _, err := h.Create("Ref/a/hits"); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete("/Ref/a/"); err != nil {
		t.Fatal(err)
	}
	// The next read sees it gone, whatever the snapshot's age.
	if _, err := h.Fresh().Lookup("Ref/a/"); err == nil {
		t.Fatal("Ref/a/ still served after Delete")
	}
	if err := h.Delete("Ref/a"); err == nil || !strings.Contains(err.Error(), "no such reference") {
		t.Fatalf("second delete: %v, want the provider's refusal", err)
	}
	if err := h.Delete("CPU/cpu0"); spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "not a context that can be deleted") {
		t.Fatalf("delete of a path nobody owns: %v, want SiNotFound saying it is not deletable", err)
	}
}
