package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/internal/alarmcmd"
	"github.com/perfagent/subagent/internal/foldlog"
)

// alarmCommands are the configured alarms' commands by alarm name: only
// the configuration file gives one, so an alarm created over SNMP or the
// control socket has none (a configured name hides such a row).
type alarmCommands map[string]config.AlarmConf

func commandsOf(c *config.Config) alarmCommands {
	out := alarmCommands{}
	for _, a := range c.Alarms {
		if len(a.Command) > 0 {
			out[a.Name] = a
		}
	}
	return out
}

// commandCred is the user the commands run as: expressions.command_user
// when the daemon is root (config refuses uid 0 there), else the
// daemon's own user, which is then not root.
func commandCred(c *config.Config, log *slog.Logger) (*syscall.Credential, error) {
	if len(commandsOf(c)) == 0 {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		if c.Expressions.CommandUser != "" {
			if uid, _, err := c.Expressions.CommandIDs(); err != nil || uid != uint32(os.Geteuid()) {
				log.Warn("alarm commands run as the daemon's own user: switching to expressions.command_user needs root",
					"command_user", c.Expressions.CommandUser, "uid", os.Geteuid())
			}
		}
		return nil, nil
	}
	uid, gid, err := c.Expressions.CommandIDs()
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uid, Gid: gid}, nil // no supplementary groups
}

// newCommandRunner is the runner of the alarms' commands for c.
func newCommandRunner(c *config.Config, log *slog.Logger) (*alarmcmd.Runner, error) {
	cred, err := commandCred(c, log)
	if err != nil {
		return nil, err
	}
	return &alarmcmd.Runner{Max: c.Expressions.CommandMax, Timeout: c.Expressions.CommandTimeout, Cred: cred,
		Log: foldlog.New(log, slog.LevelWarn)}, nil
}

// runCommand runs the command of ev's alarm, if it has one for ev: at a
// raise, and at a clear with command_on_clear. It never waits.
func (x *expressions) runCommand(ev derive.Event) {
	cmds := x.cmds.Load()
	if cmds == nil {
		return
	}
	a, ok := (*cmds)[ev.Alarm.Name]
	if !ok || (ev.Cleared && !a.CommandOnClear) {
		return
	}
	state := "firing"
	if ev.Cleared {
		state = "cleared"
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	x.runner.Run(ev.Alarm.Name, a.Command, alarmcmd.Env(ev.Alarm.Name, ev.Instance, state, derive.FormatValue(ev.Value),
		ev.Alarm.Severity, ev.Alarm.Condition(), at))
}

// applyCommands takes c's commands and bounds for the next events.
func (x *expressions) applyCommands(c *config.Config) error {
	cred, err := commandCred(c, x.log)
	if err != nil {
		return fmt.Errorf("alarm commands: %w", err)
	}
	x.runner.Set(c.Expressions.CommandMax, c.Expressions.CommandTimeout, cred)
	cmds := commandsOf(c)
	x.cmds.Store(&cmds)
	return nil
}
