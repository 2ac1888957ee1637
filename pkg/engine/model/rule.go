package model

import (
	"fmt"
	"regexp"
)

// FlowRule is the part of a rule (sast/rules/<language>/*.yaml) that the
// dataflow analysis checks. Exactly one of Sinks and Const is set.
//
// In YAML, a taint rule lists sinks:
//
//	sinks:
//	  - targets: [java.sql.Statement#executeQuery, java.sql.Statement#execute]
//	    args: [0]              # positional arguments that must not carry the rule's class (empty: all)
//	    kwargs: [shell]        # keyword arguments likewise
//	    recv: true             # the receiver too
//	    unless_field: {name: secure, equals: "true"}  # a property sink: fire when the argument object's
//	                           # field (see Setter) is not known to equal the value; no taint needed
//	    when: {arg: 1, matches: '^CURLOPT_URL$'}       # only when another argument's constant value
//	                           # (or, with key:, the constant at that key of an array/map argument) matches
//	    unless: {arg: 1, key: allowed_classes, matches: '^false$'}  # not when it matches
//	    when: {arg: 0, type: net/http.ResponseWriter}  # only when that argument has the type (or a subtype)
//
// A sink may also be a store rather than a call: `stores: [flask.session]`
// makes any field or index store into a value of one of these types (see
// the models' `returns:`, e.g. global:flask.session) a sink for the stored
// value, as in session["user"] = request.args["u"].
//
// and a constant-argument rule names a call and a pattern its argument's
// constant value (after constant propagation, configuration lookups
// included) must match:
//
//	call:
//	  targets: [java.security.MessageDigest#getInstance]
//	  arg: 0
//	  matches: '(?i)^(md5|sha-?1)$'
type FlowRule struct {
	ID       string
	Class    string
	ClassBit uint32
	Sinks    []Sink
	Const    *ConstCall
}

// Sink is where tainted data of the rule's class must not arrive.
type Sink struct {
	Targets     []string   `yaml:"targets"`
	Args        []int      `yaml:"args"`
	Kwargs      []string   `yaml:"kwargs"`
	Recv        bool       `yaml:"recv"`
	UnlessField *FieldCond `yaml:"unless_field"`
	When        *ArgCond   `yaml:"when"`
	Unless      *ArgCond   `yaml:"unless"`
	Stores      []string   `yaml:"stores"`
}

// ArgCond tests the constant value of one argument of a call (or of one key
// of an array or map argument): a mode flag, an option, a pattern.
type ArgCond struct {
	Arg     int    `yaml:"arg"`
	Kwarg   string `yaml:"kwarg"`
	Key     string `yaml:"key"`
	Matches string `yaml:"matches"`
	Type    string `yaml:"type"` // the argument's type or one of its supertypes
	Re      *regexp.Regexp
}

// FieldCond is a required property of a sink argument.
type FieldCond struct {
	Name   string `yaml:"name"`
	Equals string `yaml:"equals"`
}

// ConstCall is a call whose constant argument is insecure when it matches.
type ConstCall struct {
	Targets []string `yaml:"targets"`
	Arg     int      `yaml:"arg"`
	Matches string   `yaml:"matches"`
	Re      *regexp.Regexp
}

// Compile validates the rule and compiles its patterns.
func (r *FlowRule) Compile() error {
	if len(r.Sinks) > 0 == (r.Const != nil) {
		return fmt.Errorf("rule %s: exactly one of sinks and call", r.ID)
	}
	for _, s := range r.Sinks {
		if len(s.Targets) == 0 && len(s.Stores) == 0 {
			return fmt.Errorf("rule %s: sink without targets or stores", r.ID)
		}
		for _, c := range []*ArgCond{s.When, s.Unless} {
			if c == nil {
				continue
			}
			if c.Type != "" && c.Matches == "" {
				continue
			}
			re, err := regexp.Compile(c.Matches)
			if err != nil || c.Matches == "" {
				return fmt.Errorf("rule %s: condition needs a valid matches or a type: %v", r.ID, err)
			}
			c.Re = re
		}
	}
	if r.Const != nil {
		if len(r.Const.Targets) == 0 || r.Const.Matches == "" {
			return fmt.Errorf("rule %s: call needs targets and matches", r.ID)
		}
		re, err := regexp.Compile(r.Const.Matches)
		if err != nil {
			return fmt.Errorf("rule %s: %w", r.ID, err)
		}
		r.Const.Re = re
		return nil
	}
	if r.ClassBit = ClassBit(r.Class); r.ClassBit == 0 {
		return fmt.Errorf("rule %s: unknown class %q (see model.Classes)", r.ID, r.Class)
	}
	return nil
}
