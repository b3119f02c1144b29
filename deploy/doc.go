// Package deploy holds what an administrator installs beside the agents to
// watch a fleet (docs/FLEET.md): prometheus/ (scrape configuration,
// recording and alert rules, snmp_exporter auths, the sharded layout) and
// grafana/ (the dashboard and its provisioning). Its tests check them with
// promtool and against the shipped MIB; cmd/subagent's fleet test runs
// them with the real Prometheus.
package deploy
