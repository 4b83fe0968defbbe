// Package eligibility compiles and evaluates a template's eligibility rule:
// a boolean expression (github.com/expr-lang/expr) over the customer, the
// order, the channel and the time (docs/eligibility.md). It is pure: the
// facts are a value given to Eval; nothing here reads a database, Redis or
// a clock.
package eligibility

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Bounds of a rule (docs/eligibility.md, "Cost").
const (
	// MaxRuleLen bounds a rule's text, in characters.
	MaxRuleLen = 500
	// MaxNodes bounds the nodes of a rule's syntax tree.
	MaxNodes = 100
	// MaxRange bounds the span of a range (a..b), whose ends must be
	// literal integers: the only loops are over a range or the tags.
	MaxRange = 100
	// MaxNesting bounds predicates inside predicates (all, any, ...).
	MaxNesting = 1
)

// Channels a shop may name (Env.Channel).
const (
	ChannelWeb  = "web"
	ChannelTill = "till"
	ChannelAPI  = "api"
)

// Env is what a rule may name, typed: the program is checked against it
// when the template is saved.
type Env struct {
	Customer Customer `expr:"customer"`
	// Channel is "web", "till", "api" or "" when the shop did not say.
	Channel string `expr:"channel"`
	Order   Order  `expr:"order"`
	Now     Now    `expr:"now"`
}

// Customer is what the shop sent of the customer and what the service
// counted of them in the template's campaign (0 for an anonymous cart).
type Customer struct {
	OrdersCount           int      `expr:"orders_count"`
	Tags                  []string `expr:"tags"`
	ClaimsInCampaign      int      `expr:"claims_in_campaign"`
	RedemptionsInCampaign int      `expr:"redemptions_in_campaign"`
}

// Order is the request's cart: its subtotal (lines and shipping, before
// any discount), its number of items (units) and its currency.
type Order struct {
	SubtotalCents int    `expr:"subtotal_cents"`
	Items         int    `expr:"items"`
	Currency      string `expr:"currency"`
}

// Now is the request's time in the deployment's zone.
type Now struct {
	// Weekday is 0 (Sunday) to 6.
	Weekday int `expr:"weekday"`
	// Hour is 0 to 23.
	Hour int `expr:"hour"`
}

// NowIn is the Now of t in loc (UTC when nil).
func NowIn(t time.Time, loc *time.Location) Now {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	return Now{Weekday: int(t.Weekday()), Hour: t.Hour()}
}

// Error is a rule that does not compile, at a position of its text (line
// and column from 1; 0 when the fault is the whole rule).
type Error struct {
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// builtins are the functions a rule may call: each costs at most a pass
// over its argument.
var builtins = []string{"len", "all", "any", "none", "one", "count", "lower", "upper", "trim"}

// Compile checks and compiles a rule against Env: it must be a boolean of
// at most MaxRuleLen characters and MaxNodes nodes, with loops only over
// the tags or a literal range of at most MaxRange. An empty rule compiles
// to nil (every customer is eligible). The error is an *Error.
func Compile(rule string) (*vm.Program, error) {
	if strings.TrimSpace(rule) == "" {
		return nil, nil
	}
	if !utf8.ValidString(rule) || utf8.RuneCountInString(rule) > MaxRuleLen {
		return nil, &Error{Message: fmt.Sprintf("must be valid text of at most %d characters", MaxRuleLen)}
	}
	opts := []expr.Option{expr.Env(Env{}), expr.AsBool(), expr.MaxNodes(MaxNodes), expr.Optimize(false),
		expr.DisableAllBuiltins()}
	for _, b := range builtins {
		opts = append(opts, expr.EnableBuiltin(b))
	}
	prog, err := expr.Compile(rule, opts...)
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return nil, &Error{Line: fe.Line, Column: fe.Column + 1, Message: fe.Message}
		}
		return nil, &Error{Message: err.Error()}
	}
	b := &bounds{rule: rule}
	node := prog.Node()
	ast.Walk(&node, b)
	if b.err != nil {
		return nil, b.err
	}
	return prog, nil
}

// bounds refuses what could loop past the bounds: a range with an end
// that is not a literal or a span over MaxRange, predicates nested deeper
// than MaxNesting.
type bounds struct {
	rule string
	err  *Error
}

func (b *bounds) Visit(n *ast.Node) {
	if b.err != nil {
		return
	}
	switch v := (*n).(type) {
	case *ast.BinaryNode:
		if v.Operator != ".." {
			return
		}
		lo, lok := v.Left.(*ast.IntegerNode)
		hi, hok := v.Right.(*ast.IntegerNode)
		if !lok || !hok || hi.Value-lo.Value > MaxRange {
			b.err = b.at(v, fmt.Sprintf("a range must have literal ends at most %d apart", MaxRange))
		}
	case *ast.BuiltinNode:
		nested := 0
		for _, a := range v.Arguments {
			if p, ok := a.(*ast.PredicateNode); ok {
				nested = max(nested, predicates(p.Node))
			}
		}
		if nested > MaxNesting {
			b.err = b.at(v, fmt.Sprintf("predicates may nest at most %d deep", MaxNesting))
		}
	}
}

// predicates is the depth of predicates in n, n's own counted.
func predicates(n ast.Node) int {
	d := &depth{}
	ast.Walk(&n, d)
	return 1 + d.max
}

type depth struct{ max int }

func (d *depth) Visit(n *ast.Node) {
	if b, ok := (*n).(*ast.BuiltinNode); ok {
		for _, a := range b.Arguments {
			if p, ok := a.(*ast.PredicateNode); ok {
				d.max = max(d.max, predicates(p.Node))
			}
		}
	}
}

// at is an Error at the node's place in the rule (its first character).
func (b *bounds) at(n ast.Node, msg string) *Error {
	e := &Error{Line: 1, Column: 1, Message: msg}
	i := 0
	for _, r := range b.rule {
		if i == n.Location().From {
			break
		}
		if r == '\n' {
			e.Line, e.Column = e.Line+1, 1
		} else {
			e.Column++
		}
		i++
	}
	return e
}

// Eval runs a compiled rule on the facts: true when the customer is
// eligible (a nil program admits everyone). An error (a rule that fails at
// run time) is returned with false.
func Eval(prog *vm.Program, env Env) (bool, error) {
	if prog == nil {
		return true, nil
	}
	out, err := expr.Run(prog, env)
	if err != nil {
		return false, err
	}
	ok, _ := out.(bool)
	return ok, nil
}

// Cache keeps each template's compiled rule, by template id and the
// template's updated_at, so that a request never compiles a rule the
// cache has seen: one entry per template, replaced when it changes.
type Cache struct {
	mu sync.Mutex
	m  map[int64]cached
}

type cached struct {
	updated time.Time
	rule    string
	prog    *vm.Program
	err     error
}

// Len is the number of rules the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Program is the compiled rule of template id as of updated (its text
// rule), compiled once.
func (c *Cache) Program(id int64, updated time.Time, rule string) (*vm.Program, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok && e.updated.Equal(updated) && e.rule == rule {
		return e.prog, e.err
	}
	prog, err := Compile(rule)
	if c.m == nil {
		c.m = map[int64]cached{}
	}
	c.m[id] = cached{updated: updated, rule: rule, prog: prog, err: err}
	return prog, err
}
