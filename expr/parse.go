package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits of one expression, checked by Parse.
const (
	MaxSource    = 1024  // bytes of source
	MaxNodes     = 128   // operators, functions, paths and constants
	MaxDepth     = 32    // nesting of operators and parentheses
	MaxInstances = 10000 // instances one path may match at an evaluation
)

// op is what a node computes.
type op uint8

const (
	opNum op = iota
	opPath
	opNeg
	opNot
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opLT
	opLE
	opGT
	opGE
	opEQ
	opNE
	opAnd
	opOr
	opSum
	opAvg
	opMin
	opMax
	opCount
	opRate
	opRaw
	opAbs
)

var binOps = map[string]op{"+": opAdd, "-": opSub, "*": opMul, "/": opDiv, "%": opMod,
	"<": opLT, "<=": opLE, ">": opGT, ">=": opGE, "==": opEQ, "!=": opNE,
	"&&": opAnd, "and": opAnd, "||": opOr, "or": opOr}

// funcs are the functions; aggregations take a per-instance argument and
// return one value.
var funcs = map[string]op{"sum": opSum, "avg": opAvg, "min": opMin, "max": opMax, "count": opCount,
	"rate": opRate, "raw": opRaw, "abs": opAbs}

func (o op) aggregates() bool { return o >= opSum && o <= opCount }

// node is one node of the syntax tree.
type node struct {
	op    op
	num   float64
	path  string   // opPath: as written
	parts []string // opPath: its parts, "*" for a wildcard
	x, y  *node
	vec   bool // yields one value per instance
}

// Expr is a parsed expression.
type Expr struct {
	src   string
	root  *node
	nodes int
	paths []*node
}

// String is the expression as written.
func (e *Expr) String() string { return e.src }

// PerInstance tells whether the expression yields one value per
// instance (it holds a path with * outside an aggregation).
func (e *Expr) PerInstance() bool { return e.root.vec }

// Nodes is the number of nodes of its syntax tree.
func (e *Expr) Nodes() int { return e.nodes }

// Bound is the most value operations one evaluation can cost: each node
// is evaluated once and yields at most MaxInstances values.
func (e *Expr) Bound() int { return e.nodes * MaxInstances }

// Paths are the paths the expression reads, as written.
func (e *Expr) Paths() []string {
	out := make([]string, len(e.paths))
	for i, p := range e.paths {
		out[i] = p.path
	}
	return out
}

// Error is a syntax or type error at a byte offset of the source.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("at %d: %s", e.Pos+1, e.Msg) }

type token struct {
	kind byte // 'n' number, 'p' path, 'i' identifier, 'o' operator, 0 end
	text string
	pos  int
}

type parser struct {
	src   string
	toks  []token
	i     int
	nodes int
	depth int
	paths []*node
}

// Parse parses and type-checks src.
func Parse(src string) (*Expr, error) {
	if len(src) > MaxSource {
		return nil, &Error{0, fmt.Sprintf("longer than %d bytes", MaxSource)}
	}
	if strings.TrimSpace(src) == "" {
		return nil, &Error{0, "empty expression"}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != 0 {
		return nil, &Error{t.pos, fmt.Sprintf("unexpected %q", t.text)}
	}
	return &Expr{src: src, root: root, nodes: p.nodes, paths: p.paths}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != 0 {
		p.i++
	}
	return t
}

func (p *parser) add(n *node, pos int) (*node, error) {
	p.nodes++
	if p.nodes > MaxNodes {
		return nil, &Error{pos, fmt.Sprintf("more than %d operators, functions, paths and numbers", MaxNodes)}
	}
	return n, nil
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > MaxDepth {
		return &Error{pos, fmt.Sprintf("nested deeper than %d", MaxDepth)}
	}
	return nil
}

// binary parses a left-associative level of operators ops above next.
func (p *parser) binary(next func() (*node, error), ops ...string) (*node, error) {
	x, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if (t.kind != 'o' && t.kind != 'i') || !contains(ops, t.text) {
			return x, nil
		}
		p.next()
		y, err := next()
		if err != nil {
			return nil, err
		}
		if x, err = p.add(&node{op: binOps[t.text], x: x, y: y, vec: x.vec || y.vec}, t.pos); err != nil {
			return nil, err
		}
	}
}

func contains(ops []string, s string) bool {
	for _, o := range ops {
		if o == s {
			return true
		}
	}
	return false
}

func (p *parser) or() (*node, error)  { return p.binary(p.and, "||", "or") }
func (p *parser) and() (*node, error) { return p.binary(p.not, "&&", "and") }

func (p *parser) not() (*node, error) {
	t := p.peek()
	if t.text != "!" && !(t.kind == 'i' && t.text == "not") {
		return p.cmp()
	}
	p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return p.add(&node{op: opNot, x: x, vec: x.vec}, t.pos)
}

// cmp is not associative: a < b < c is refused rather than read as
// (a < b) < c.
func (p *parser) cmp() (*node, error) {
	x, err := p.binary(p.mul, "+", "-")
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != 'o' || !contains(cmpOps, t.text) {
		return x, nil
	}
	p.next()
	y, err := p.binary(p.mul, "+", "-")
	if err != nil {
		return nil, err
	}
	if u := p.peek(); u.kind == 'o' && contains(cmpOps, u.text) {
		return nil, &Error{u.pos, "comparisons do not chain: write a < b && b < c"}
	}
	return p.add(&node{op: binOps[t.text], x: x, y: y, vec: x.vec || y.vec}, t.pos)
}

var cmpOps = []string{"<", "<=", ">", ">=", "==", "!="}

func (p *parser) mul() (*node, error) { return p.binary(p.unary, "*", "/", "%") }

func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind == 'o' && (t.text == "-" || t.text == "+") {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.unary()
		if err != nil || t.text == "+" {
			return x, err
		}
		return p.add(&node{op: opNeg, x: x, vec: x.vec}, t.pos)
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t := p.next()
	switch {
	case t.kind == 'n':
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, &Error{t.pos, fmt.Sprintf("%q is not a number", t.text)}
		}
		return p.add(&node{op: opNum, num: v}, t.pos)
	case t.kind == 'p':
		n, err := p.add(pathNode(t.text), t.pos)
		if err == nil {
			p.paths = append(p.paths, n)
		}
		return n, err
	case t.kind == 'i':
		return p.call(t)
	case t.text == "(":
		return p.inner(t.pos, "missing )")
	case t.kind == 0:
		return nil, &Error{t.pos, "unexpected end of the expression"}
	}
	return nil, &Error{t.pos, fmt.Sprintf("unexpected %q", t.text)}
}

// inner parses what a ( opened at pos holds, up to its ); missing is the
// error when it is not there.
func (p *parser) inner(pos int, missing string) (*node, error) {
	if err := p.enter(pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	if c := p.next(); c.text != ")" {
		return nil, &Error{c.pos, missing}
	}
	return x, nil
}

func (p *parser) call(t token) (*node, error) {
	f, ok := funcs[t.text]
	if !ok {
		return nil, &Error{t.pos, fmt.Sprintf("%q is neither a function (sum avg min max count rate raw abs) nor a path (a path has a /: Mem/Real/free)", t.text)}
	}
	if o := p.next(); o.text != "(" {
		return nil, &Error{o.pos, fmt.Sprintf("%s needs (", t.text)}
	}
	x, err := p.inner(t.pos, fmt.Sprintf("%s takes one argument, then )", t.text))
	if err != nil {
		return nil, err
	}
	switch {
	case f.aggregates() && !x.vec:
		return nil, &Error{t.pos, fmt.Sprintf("%s needs values per instance: a path with * (%s(Disk/*/busy))", t.text, t.text)}
	case (f == opRate || f == opRaw) && x.op != opPath:
		return nil, &Error{t.pos, fmt.Sprintf("%s takes a path (%s(Disk/*/rblk))", t.text, t.text)}
	}
	return p.add(&node{op: f, x: x, vec: x.vec && !f.aggregates()}, t.pos)
}

func pathNode(s string) *node {
	return &node{op: opPath, path: s, parts: strings.Split(s, "/"), vec: strings.Contains(s, "*")}
}

// lex splits src into tokens. A word that starts with a letter and holds
// a / is a path: its parts are names (letters, digits, _ . : @ % -) or *;
// operators beside a path need spaces (Mem/Real/free / Mem/Real/size).
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && (isDigit(src[j]) || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && isDigit(src[k]) {
					for j = k; j < len(src) && isDigit(src[j]); j++ {
					}
				}
			}
			toks = append(toks, token{'n', src[i:j], i})
			i = j
		case isLetter(c):
			j := i
			for j < len(src) && (isNameByte(src[j]) || src[j] == '/' || src[j] == '*') {
				j++
			}
			w := src[i:j]
			if !strings.Contains(w, "/") {
				if strings.Contains(w, "*") {
					return nil, &Error{i, fmt.Sprintf("%q: write spaces around * when it multiplies", w)}
				}
				toks = append(toks, token{'i', w, i})
			} else {
				if err := checkPath(w, i); err != nil {
					return nil, err
				}
				toks = append(toks, token{'p', w, i})
			}
			i = j
		default:
			if j := i + 2; j <= len(src) {
				if _, ok := binOps[src[i:j]]; ok {
					toks = append(toks, token{'o', src[i:j], i})
					i = j
					continue
				}
			}
			if strings.IndexByte("+-*/%<>()!", c) < 0 {
				return nil, &Error{i, fmt.Sprintf("unexpected character %q", string(rune(c)))}
			}
			toks = append(toks, token{'o', string(c), i})
			i++
		}
	}
	return append(toks, token{pos: len(src)}), nil
}

func checkPath(w string, pos int) error {
	for _, part := range strings.Split(w, "/") {
		switch {
		case part == "":
			return &Error{pos, fmt.Sprintf("path %q has an empty part", w)}
		case part != "*" && strings.Contains(part, "*"):
			return &Error{pos, fmt.Sprintf("path %q: * stands for a whole part; write spaces around * when it multiplies", w)}
		}
	}
	if strings.HasSuffix(w, "*") {
		return &Error{pos, fmt.Sprintf("path %q ends in *: name the statistic (Disk/*/busy)", w)}
	}
	return nil
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameByte(c byte) bool { return isLetter(c) || isDigit(c) || strings.IndexByte("_.:@%-", c) >= 0 }
