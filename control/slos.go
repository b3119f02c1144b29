package control

import (
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/unixsock"
)

// SLOStore holds the daemon's service level objectives: those of the
// configuration file and those created here or over SNMP (sloDefTable),
// checked as the configuration file's are (daemon/slocontrol.go).
type SLOStore interface {
	List() []spmiwire.ObjectiveDef
	Create(o spmiwire.ObjectiveDef) error
	Delete(name string) error
}

// sloOp answers slo.list (readers) and slo.create and slo.delete
// (admins, logged as the other changes).
func (s *Server) sloOp(req *spmiwire.Request, who caller) spmiwire.Response {
	if s.SLOs == nil {
		return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiOtherErr, Msg: "this daemon serves no service level objectives"}}
	}
	if req.Op == "slo.list" {
		return spmiwire.Response{Objectives: s.SLOs.List()}
	}
	if req.Op != "slo.create" && req.Op != "slo.delete" {
		return spmiwire.Response{Err: asSpmiError(errBadOp(req.Op))}
	}
	if req.Objective == nil {
		return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: req.Op + " needs objective (name)"}}
	}
	path := unixsock.LogText("SLO/" + req.Objective.Name)
	if refused := s.admin(req, who, path); refused != nil {
		return spmiwire.Response{Err: refused}
	}
	var err error
	if req.Op == "slo.create" {
		err = s.SLOs.Create(*req.Objective)
	} else {
		err = s.SLOs.Delete(req.Objective.Name)
	}
	return s.changed(req, who, path, err)
}
