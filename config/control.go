package config

import (
	"math"
	"strconv"
)

// Control configures the control socket (subagent.sock in run_dir): who may
// read (peek, get, status) and who may change (create, delete). Root and
// the daemon's own user may always do both; docs/SECURITY.md.
type Control struct {
	Mode           string `mapstructure:"mode"`  // octal, such as "0660"
	Group          int    `mapstructure:"group"` // gid of the socket; <= 0 leaves the daemon's
	AllowUIDs      []int  `mapstructure:"allow_uids"`
	AllowGIDs      []int  `mapstructure:"allow_gids"`
	AdminUIDs      []int  `mapstructure:"admin_uids"`
	AdminGIDs      []int  `mapstructure:"admin_gids"`
	MaxConnections int    `mapstructure:"max_connections"`

	// What one user other than root and the daemon's makes the daemon
	// hold through all its connections together: runtime hotsets and
	// statsets (docs/SECURITY.md).
	MaxHotsetsPerUID        int `mapstructure:"max_hotsets_per_uid"`
	MaxHotsetPeerSetsPerUID int `mapstructure:"max_hotset_peer_sets_per_uid"`
	MaxHotsetBytesPerUID    int `mapstructure:"max_hotset_bytes_per_uid"` // statsets' too
	MaxStatsetsPerUID       int `mapstructure:"max_statsets_per_uid"`

	// FileMode is Mode parsed.
	FileMode uint32 `mapstructure:"-"`
}

func (c *Control) check(bad func(key, format string, args ...any)) {
	m, err := strconv.ParseUint(c.Mode, 8, 32)
	if err != nil || m > 0o777 || m&0o600 != 0o600 {
		bad("control.mode", "%q is not an octal file mode from 0600 to 0777 that lets the owner read and write", c.Mode)
	}
	c.FileMode = uint32(m)
	if n := c.MaxConnections; n < 4 || n > 4096 {
		bad("control.max_connections", "%d is not from 4 to 4096", n)
	}
	for _, l := range []struct {
		key      string
		val, max int
	}{
		{"control.max_hotsets_per_uid", c.MaxHotsetsPerUID, 1 << 16},
		{"control.max_hotset_peer_sets_per_uid", c.MaxHotsetPeerSetsPerUID, 1 << 20},
		{"control.max_hotset_bytes_per_uid", c.MaxHotsetBytesPerUID, 1 << 40},
		{"control.max_statsets_per_uid", c.MaxStatsetsPerUID, 1 << 16},
	} {
		if l.val < 1 || l.val > l.max {
			bad(l.key, "%d is not from 1 to %d", l.val, l.max)
		}
	}
	checkIDs(bad, "control.allow_uids", c.AllowUIDs)
	checkIDs(bad, "control.allow_gids", c.AllowGIDs)
	checkIDs(bad, "control.admin_uids", c.AdminUIDs)
	checkIDs(bad, "control.admin_gids", c.AdminGIDs)
}

// checkIDs checks a list of numeric user or group ids.
func checkIDs(bad func(key, format string, args ...any), key string, ids []int) {
	for _, id := range ids {
		if id < 0 || id > math.MaxUint32 {
			bad(key, "%d is not a user or group id (0 to 4294967295)", id)
		}
	}
}

// UIDs converts checked ids to the kernel's type.
func UIDs(ids []int) []uint32 {
	out := make([]uint32, len(ids))
	for i, v := range ids {
		out[i] = uint32(v)
	}
	return out
}
