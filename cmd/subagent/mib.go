package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/mib"
)

func mibCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mib",
		Short: "Write the SMIv2 MIB module of the tree being served",
		Long: "Write an SMIv2 MIB module describing the data hierarchy: the shipped module\n" +
			"(MIBs/" + mib.DefaultModule + ".txt, the same on every host) plus what the running\n" +
			"daemon's tree (or this host's, when no daemon runs or with --local) adds to it,\n" +
			"such as DDS suppliers and ARM applications' metrics. A module that cannot keep\n" +
			"every shipped object's name and OID (another base OID, an addition taking a\n" +
			"shipped name) is named " + mib.HostModule + ", as is the module of this host's own\n" +
			"instances that --instances writes. Load it with: snmpwalk -M +DIR -m MODULE ...\n" +
			"The base OID is the served tree's; --base-oid given here overrides it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := clientConfig(cmd)
			if err != nil {
				return err
			}
			opts := mib.Options{}
			if cmd.Flags().Changed("module") {
				opts.Module, _ = cmd.Flags().GetString("module")
			}
			opts.Include, _ = cmd.Flags().GetStringArray("include")
			opts.Instances, _ = cmd.Flags().GetBool("instances")
			if cmd.Flags().Changed("base-oid") {
				opts.Base = cfg.Base
			}
			if opts.Module != "" {
				if err := mib.ValidModuleName(opts.Module); err != nil {
					return err
				}
			}
			r, err := openReader(cmd, cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			entries, err := r.Peek(cmd.Context(), "")
			if err != nil {
				return err
			}
			tree, err := mib.FromEntries(entries)
			if err != nil {
				return err
			}
			m, changed, err := mib.GenerateMerged(tree, opts)
			if err != nil {
				return err
			}
			if len(changed) > 0 && !cmd.Flags().Changed("module") {
				fmt.Fprintf(cmd.ErrOrStderr(), "subagent: mib: this tree gives %d objects of the shipped module another name or OID (%s, ...); the module is %s\n",
					len(changed), changed[0], m.Name)
			}
			if exp, _ := cmd.Flags().GetString("exporter"); exp != "" {
				if err := writeExporterConfig(exp, m, tree, opts.Instances); err != nil {
					return err
				}
			}
			out, _ := cmd.Flags().GetString("output")
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(m.Text)
				return err
			}
			return writeFileAtomic(out, m.Text)
		},
	}
	cmd.Flags().StringP("output", "o", "", "file to write (default: standard output)")
	cmd.Flags().String("module", mib.DefaultModule, "module name")
	cmd.Flags().String("exporter", "", "also write snmp_exporter's generator configuration for this module to this file\n(what this host adds, such as derived statistics, included)")
	cmd.Flags().StringArray("include", nil, "describe only this subtree (a path such as CPU/ or Mem/Real/%free); repeatable")
	cmd.Flags().Bool("instances", false, "also declare each instance's statistics as scalars named after it (cpuCpu0Idle), as this host has them")
	addLocalFlag(cmd)
	return cmd
}

// writeFileAtomic replaces file in one step, so that tools reading the
// MIB directory never see half a module.
func writeFileAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// writeExporterConfig writes snmp_exporter's generator configuration for
// m, the module made from the served tree (merged with the reference, as
// GenerateMerged does, unless instances asked for the host's alone).
func writeExporterConfig(file string, m *mib.Module, tree mib.Tree, instances bool) error {
	if !instances {
		ref, err := mib.Reference()
		if err != nil {
			return err
		}
		tree = mib.Merge(ref, tree)
	}
	b, err := mib.ExporterConfig(m, tree)
	if err != nil {
		return err
	}
	return writeFileAtomic(file, b)
}
