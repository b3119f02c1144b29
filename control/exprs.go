package control

import (
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/unixsock"
)

// ExprStore holds the daemon's derived statistics and alarms: those of
// the configuration file and those created here or over SNMP, which both
// see, checked as the configuration file's are (daemon/exprcontrol.go).
type ExprStore interface {
	List() []spmiwire.ExprDef
	Create(d spmiwire.ExprDef) error
	Delete(kind, name string) error
}

// exprOp answers expr.list (readers) and expr.create and expr.delete
// (admins, logged as the other changes).
func (s *Server) exprOp(req *spmiwire.Request, who caller) spmiwire.Response {
	if s.Exprs == nil {
		return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiOtherErr, Msg: "this daemon serves no derived statistics or alarms"}}
	}
	if req.Op == "expr.list" {
		return spmiwire.Response{Defs: s.Exprs.List()}
	}
	if req.Op != "expr.create" && req.Op != "expr.delete" {
		return spmiwire.Response{Err: asSpmiError(errBadOp(req.Op))}
	}
	if req.Def == nil {
		return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: req.Op + " needs def (kind, name)"}}
	}
	path := unixsock.LogText(req.Def.Kind + "/" + req.Def.Name)
	if refused := s.admin(req, who, path); refused != nil {
		return spmiwire.Response{Err: refused}
	}
	var err error
	if req.Op == "expr.create" {
		err = s.Exprs.Create(*req.Def)
	} else {
		err = s.Exprs.Delete(req.Def.Kind, req.Def.Name)
	}
	return s.changed(req, who, path, err)
}
