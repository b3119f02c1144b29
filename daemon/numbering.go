package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/spmi"
)

// MigratedSuffix is added to the name of a state file of an older version
// once its numbers are durably in NumberingFile. It is kept, not removed,
// so that a downgrade can be undone by hand; the daemon never reads it.
const MigratedSuffix = ".migrated"

// loadNumbering reads the one numbering of the daemon (NumberingFile)
// and merges into it the state files of older versions, which kept
// ARM transactions (ARMNumberingFile) and RTime/LAN hosts
// (rtimelan.StoreFile) apart. Every number is kept: a name numbered
// differently in two files is an error naming both. The old files are
// renamed only after the merged numbering is written and synced, so a
// crash in between merges them again, to the same numbers.
//
// A damaged rtimelan.json is left as it is and turns RTime/LAN off
// (rtlErr), as it did before the merge; its hosts' numbers stay unknown
// until the operator repairs or removes it.
//
// Nothing is written here: migrate, nil when there is nothing to merge,
// writes the merge once the start cannot be refused any more (Run).
func loadNumbering(c *config.Config, log *slog.Logger) (num *spmi.Numbering, migrate func() error, rtlErr, err error) {
	num, err = spmi.LoadNumbering(filepath.Join(c.StateDir, NumberingFile))
	if err != nil {
		return nil, nil, nil, err
	}
	num.SetMaxNames(c.State.MaxNamesPerContext)
	num.SetGrace(c.State.NameGrace)
	var merged []string
	armFile := filepath.Join(c.StateDir, ARMNumberingFile)
	old, err := spmi.LoadNumbering(armFile)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, serr := os.Lstat(armFile); serr == nil {
		if err := num.Merge(old); err != nil {
			return nil, nil, nil, err
		}
		merged = append(merged, armFile)
	}
	rtlFile := filepath.Join(c.StateDir, rtimelan.StoreFile)
	switch old, err := rtimelan.LoadOldStore(rtlFile); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		rtlErr = err
	default:
		if err := num.Merge(old); err != nil {
			return nil, nil, nil, err
		}
		merged = append(merged, rtlFile)
	}
	if len(merged) == 0 {
		return num, nil, rtlErr, nil
	}
	migrate = func() error {
		if err := num.Save(); err != nil {
			return fmt.Errorf("merging %v into %s: %w", merged, num.File(), err)
		}
		for _, f := range merged {
			if err := os.Rename(f, f+MigratedSuffix); err != nil {
				// Harmless: it is merged again, to the same numbers, at the next start.
				log.Warn("instance numbering: cannot rename a merged state file", "file", f, "err", err)
			}
		}
		log.Info("instance numbering: older state files merged, every number kept", "into", num.File(), "files", merged, "renamed_to", "*"+MigratedSuffix)
		return nil
	}
	return num, migrate, rtlErr, nil
}
