package daemon

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// EngineFile is the state file of the SNMPv3 engine: its ID and boots.
const EngineFile = "snmp-engine"

// engineState is the agent's one SNMPv3 engine (usm.Engine): loaded at
// most once per daemon start, when the responder listens or a v3 trap
// destination needs it (New, or the reload that adds the first one). The
// start is counted on disk (snmpEngineBoots) only once the daemon cannot
// fail to start any more (serve, called by Run), so that a refused start
// leaves the state file as it was; later loads are counted at once.
type engineState struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	started bool
	eng     usm.Engine
	err     error
	unsaved bool // eng's boots are not on disk yet
	serving bool // Run has passed serve: loads are saved at once
}

// get loads the engine the first time; later calls give the same engine
// (or the same error: SNMPv3 stays off until a restart).
func (e *engineState) get() (usm.Engine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		e.started = true
		e.eng, e.err = loadEngine(e.dir, e.log)
		e.unsaved = e.err == nil
	}
	if e.serving {
		e.saveLocked()
	}
	return e.eng, e.err
}

// serve counts this start: the engine's state, if loaded, is written
// (synced) now, right before anything can answer or send as it; from now
// on a first load is written at once. An error stops the start: the
// engine was handed out, and its boots must not be used unsaved.
func (e *engineState) serve() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.serving = true
	return e.saveLocked()
}

func (e *engineState) saveLocked() error {
	if !e.unsaved {
		return nil
	}
	e.unsaved = false
	if err := saveEngine(e.dir, e.eng); err != nil {
		e.eng, e.err = usm.Engine{}, err
		return err
	}
	return nil
}

// needsEngine tells whether a configuration asks for the engine: the
// responder listens, or a destination sends SNMPv3.
func needsEngine(c *config.Config) bool {
	return c.Listen != "none" || hasV3(trapDests(c)) >= 0
}

// hasV3 is the index of the first SNMPv3 destination, -1 without one.
func hasV3(ds []traps.Dest) int {
	return slices.IndexFunc(ds, func(d traps.Dest) bool { return d.Version == "v3" })
}

// loadEngine reads the SNMPv3 engine's state from dir, makes an engine
// ID the first time (RFC 3411 format: enterprise 32473, format 5, 12
// random octets) and counts this start in its Boots, writing nothing:
// saveEngine writes it before anything answers or sends as it. A state
// directory the daemon may not write is an error here already.
func loadEngine(dir string, log *slog.Logger) (usm.Engine, error) {
	var id []byte
	var boots uint32
	path := filepath.Join(dir, EngineFile)
	data, err := trustdir.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		id = make([]byte, 17)
		copy(id, []byte{0x80, 0x00, 0x7e, 0xd9, 5})
		if _, err := rand.Read(id[5:]); err != nil {
			return usm.Engine{}, err
		}
	case err != nil:
		return usm.Engine{}, fmt.Errorf("SNMPv3 engine state: %w", err)
	default:
		if id, boots, err = parseEngine(data); err != nil {
			return usm.Engine{}, fmt.Errorf("SNMPv3 engine state %s: %w; move it away for a new engine ID (managers must then learn it again)", path, err)
		}
	}
	// The file is replaced by a new one (trustdir.WriteFile): the
	// directory must take it. A missing one is made by Run, writable.
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usm.Engine{}, fmt.Errorf("SNMPv3 engine state: cannot write in %s: %w", dir, err)
	}
	if boots < usm.MaxBoots {
		boots++
	} else {
		log.Error("snmpEngineBoots is at its maximum: every authenticated SNMPv3 request fails until the engine gets a new ID",
			"file", path)
	}
	return usm.Engine{ID: id, Boots: boots, Start: time.Now()}, nil
}

// saveEngine writes e's ID and boots (synced).
func saveEngine(dir string, e usm.Engine) error {
	out := fmt.Sprintf("engine_id %x\nboots %d\n", e.ID, e.Boots)
	if err := trustdir.WriteFile(filepath.Join(dir, EngineFile), []byte(out), 0o600); err != nil {
		return fmt.Errorf("SNMPv3 engine state: %w", err)
	}
	return nil
}

// parseEngine reads the state file; both lines are needed: boots read as
// 0 would let messages of the earlier starts in again (RFC 3414 2.2.2).
func parseEngine(data []byte) (id []byte, boots uint32, err error) {
	sawBoots := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch k {
		case "engine_id":
			if id, err = usm.ParseEngineID(v); err != nil {
				return nil, 0, fmt.Errorf("engine_id: %w", err)
			}
		case "boots":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n > usm.MaxBoots {
				return nil, 0, fmt.Errorf("boots: %q is not from 0 to %d", v, usm.MaxBoots)
			}
			boots, sawBoots = uint32(n), true
		}
	}
	if id == nil {
		return nil, 0, errors.New("no engine_id line")
	}
	if !sawBoots {
		return nil, 0, errors.New("no boots line")
	}
	return id, boots, nil
}

// responderUsers turns snmp.users into the responder's users with keys
// localized to engineID, reading the password files. Errors name the key.
func responderUsers(c *config.Config, engineID []byte) ([]responder.User, error) {
	out := make([]responder.User, 0, len(c.SNMP.Users))
	for i, su := range c.SNMP.Users {
		key := fmt.Sprintf("snmp.users[%d]", i)
		cred := userCredentials(su)
		for _, f := range []struct {
			name, path string
			pass       *string
		}{{"auth_password_file", su.AuthPasswordFile, &cred.AuthPass}, {"priv_password_file", su.PrivPasswordFile, &cred.PrivPass}} {
			if f.path == "" {
				continue
			}
			p, err := readPassword(f.path)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", key, f.name, err)
			}
			*f.pass = p
		}
		cred, err := cred.Norm()
		if err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			return nil, fmt.Errorf("%s.%s: %s", key, field, msg)
		}
		keys, err := usm.Localize(cred, engineID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		lvl, err := su.MinLevel()
		if err != nil {
			return nil, fmt.Errorf("%s.security_level: %w", key, err)
		}
		u := responder.User{Name: cred.User, Keys: keys, AllowMD5: su.AllowMD5,
			MinLevel: []responder.Level{responder.NoAuthNoPriv, responder.AuthNoPriv, responder.AuthPriv}[lvl]}
		for j, s := range su.Subtrees {
			o, err := asn1tree.Parse(s)
			if err != nil {
				return nil, fmt.Errorf("%s.subtrees[%d]: %w", key, j, err)
			}
			u.Subtrees = append(u.Subtrees, o)
		}
		out = append(out, u)
	}
	return out, nil
}

// readPassword reads a password file, which only its owner, the daemon's
// user (or root), may read; one line, its end trimmed.
func readPassword(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s has mode %04o: others may read it; fix: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return "", fmt.Errorf("%s is owned by uid %d, not by the daemon's (%d) or root", path, st.Uid, os.Geteuid())
	}
	b, err := trustdir.ReadFile(path)
	if err != nil {
		return "", err
	}
	p := strings.TrimRight(string(b), "\r\n")
	if strings.ContainsAny(p, "\r\n") {
		return "", fmt.Errorf("%s holds more than one line", path)
	}
	if len(p) < usm.MinPassword {
		return "", fmt.Errorf("the password in %s has fewer than %d characters (RFC 3414)", path, usm.MinPassword)
	}
	return p, nil
}

// userChanges tells what replacing the users old by new changes, by name
// only (keys are never logged).
func userChanges(old, new []responder.User) (added, removed, changed []string) {
	byName := map[string]responder.User{}
	for _, u := range old {
		byName[u.Name] = u
	}
	for _, u := range new {
		o, ok := byName[u.Name]
		switch {
		case !ok:
			added = append(added, u.Name)
		case !sameUser(o, u):
			changed = append(changed, u.Name)
		}
		delete(byName, u.Name)
	}
	for n := range byName {
		removed = append(removed, n)
	}
	slices.Sort(removed)
	return added, removed, changed
}

func sameUser(a, b responder.User) bool {
	return a.Keys.Auth.Name == b.Keys.Auth.Name && bytes.Equal(a.Keys.AuthKey, b.Keys.AuthKey) &&
		a.Keys.Priv.Name == b.Keys.Priv.Name && bytes.Equal(a.Keys.PrivKey, b.Keys.PrivKey) &&
		a.MinLevel == b.MinLevel && a.AllowMD5 == b.AllowMD5 &&
		slices.EqualFunc(a.Subtrees, b.Subtrees, func(x, y asn1tree.OID) bool { return x.Equal(y) })
}
