package config

import "time"

// ARM configures RTime/ARM: the socket arm.sock in run_dir where ARM
// libraries register, the file each process gets, and the statistics
// (docs/ARM.md).
type ARM struct {
	Enabled         bool          `mapstructure:"enabled"`
	Weight          int           `mapstructure:"weight"`
	Window          time.Duration `mapstructure:"window"`
	DrainInterval   time.Duration `mapstructure:"drain_interval"`
	RingSlots       int           `mapstructure:"ring_slots"`
	ProcessApps     int           `mapstructure:"process_applications"`
	ProcessTrans    int           `mapstructure:"process_transactions"`
	MaxApplications int           `mapstructure:"max_applications"`
	MaxTransactions int           `mapstructure:"max_transactions"`
	MaxProcesses    int           `mapstructure:"max_processes"`
	// Per user (of the process that registered a name first): no local
	// user may take every place (docs/ARM.md).
	MaxApplicationsPerUID int `mapstructure:"max_applications_per_uid"`
	MaxTransactionsPerUID int `mapstructure:"max_transactions_per_uid"`
	MaxProcessesPerUID    int `mapstructure:"max_processes_per_uid"`
	// Names of applications one user may hold in the numbering: in the
	// tree or in their grace period (state.name_grace).
	MaxApplicationNamesPerUID int           `mapstructure:"max_application_names_per_uid"`
	AppIdle                   time.Duration `mapstructure:"app_idle"`
	AllowUIDs                 []int         `mapstructure:"allow_uids"`
	AllowGIDs                 []int         `mapstructure:"allow_gids"`

	// Hellos of one user on arm.sock: this many at once, then this many a
	// second (each may cost a ring).
	HelloBurstPerUID int `mapstructure:"hello_burst_per_uid"`
	HelloRatePerUID  int `mapstructure:"hello_rate_per_uid"`
}

// Bounds of the arm settings; the file format allows no more (armring).
const (
	armMaxSlots = 1 << 20
	armMaxApps  = 4096
	armMaxTrans = 65536
)

// check validates the arm settings; maxNames is state.max_names_per_context,
// which bounds a user's share of the applications' names.
func (a *ARM) check(maxNames int, bad func(key, format string, args ...any)) {
	if a.Weight < 0 || a.Weight > 99 {
		bad("arm.weight", "%d is not a percentage from 0 to 99", a.Weight)
	}
	if a.Window < 10*time.Second || a.Window > time.Hour {
		bad("arm.window", "%v is not from 10s to 1h", a.Window)
	}
	if a.DrainInterval < 10*time.Millisecond || a.DrainInterval > 10*time.Second {
		bad("arm.drain_interval", "%v is not from 10ms to 10s", a.DrainInterval)
	}
	if n := a.RingSlots; n < 16 || n > armMaxSlots || n&(n-1) != 0 {
		bad("arm.ring_slots", "%d is not a power of two from 16 to %d", n, armMaxSlots)
	}
	for _, f := range []struct {
		key   string
		v, mx int
	}{
		{"arm.process_applications", a.ProcessApps, armMaxApps},
		{"arm.process_transactions", a.ProcessTrans, armMaxTrans},
		{"arm.max_applications", a.MaxApplications, 100000},
		{"arm.max_transactions", a.MaxTransactions, 1000000},
		{"arm.max_processes", a.MaxProcesses, 100000},
		{"arm.hello_burst_per_uid", a.HelloBurstPerUID, 100000},
		{"arm.hello_rate_per_uid", a.HelloRatePerUID, 10000},
	} {
		if f.v < 1 || f.v > f.mx {
			bad(f.key, "%d is not from 1 to %d", f.v, f.mx)
		}
	}
	for _, f := range []struct {
		key, totalKey string
		v, total      int
	}{
		{"arm.max_applications_per_uid", "arm.max_applications", a.MaxApplicationsPerUID, a.MaxApplications},
		{"arm.max_transactions_per_uid", "arm.max_transactions", a.MaxTransactionsPerUID, a.MaxTransactions},
		{"arm.max_processes_per_uid", "arm.max_processes", a.MaxProcessesPerUID, a.MaxProcesses},
	} {
		if f.v < 1 || f.v > f.total {
			bad(f.key, "%d is not from 1 to %s (%d)", f.v, f.totalKey, f.total)
		}
	}
	if n := a.MaxApplicationNamesPerUID; n < 1 || n > maxNames {
		bad("arm.max_application_names_per_uid", "%d is not from 1 to state.max_names_per_context (%d)", n, maxNames)
	}
	if a.AppIdle < time.Minute || a.AppIdle > 30*24*time.Hour {
		bad("arm.app_idle", "%v is not from 1m to 720h", a.AppIdle)
	}
	for _, ids := range []struct {
		key string
		ids []int
	}{{"arm.allow_uids", a.AllowUIDs}, {"arm.allow_gids", a.AllowGIDs}} {
		for _, id := range ids.ids {
			if id < 0 || id > 1<<32-1 {
				bad(ids.key, "%d is not a user or group id (0 to 4294967295)", id)
			}
		}
	}
}
