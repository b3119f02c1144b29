// Package spmiwire is the SPMI data as it crosses the daemon's control
// socket: statistic descriptions, values, peek entries, samples, and the
// requests and answers of the protocol (one JSON object per line each
// way). The daemon's spmi and control packages use these types under
// their own names, and the Go consumer (client/consumer) decodes them, so
// both sides share one definition; it needs the standard library only.
package spmiwire
