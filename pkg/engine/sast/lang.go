package sast

import (
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// methodSpec describes a call on a receiver (obj.m(), $obj->m(), Cls::m()):
// the callee text pattern rules see is receiver + sep + name.
type methodSpec struct {
	recv, name, sep string
}

// callSpec maps a grammar's call constructs to the callee text pattern
// rules match with `callee:`. Everything else about a language is in its
// front end (package lower/...).
type callSpec struct {
	calls    map[string]string // node type -> callee field ("#type": first child of that type, "@N": N-th unnamed child)
	methods  map[string]methodSpec
	keywords map[string]string // statements that act as calls (echo, include, backticks) -> callee name; "@field": "(" + field text + ")"
	comments map[string]bool
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var callSpecs = map[string]*callSpec{
	"python": {calls: map[string]string{"call": "function"}, comments: set("comment")},
	"javascript": {calls: map[string]string{"call_expression": "function", "new_expression": "constructor"},
		comments: set("comment")},
	"typescript": {calls: map[string]string{"call_expression": "function", "new_expression": "constructor"},
		comments: set("comment")},
	"go": {calls: map[string]string{"call_expression": "function"}, comments: set("comment")},
	"java": {calls: map[string]string{"object_creation_expression": "type"},
		methods:  map[string]methodSpec{"method_invocation": {"object", "name", "."}},
		comments: set("line_comment", "block_comment")},
	"php": {calls: map[string]string{"function_call_expression": "function", "object_creation_expression": "#name"},
		methods: map[string]methodSpec{
			"member_call_expression":          {"object", "name", "->"},
			"nullsafe_member_call_expression": {"object", "name", "->"},
			"scoped_call_expression":          {"scope", "name", "::"},
		},
		keywords: map[string]string{
			"echo_statement": "echo", "print_intrinsic": "print", "exit_statement": "exit",
			"include_expression": "include", "include_once_expression": "include_once",
			"require_expression": "require", "require_once_expression": "require_once",
			"shell_command_expression": "`", "cast_expression": "@type",
		},
		comments: set("comment")},
	"ruby": {calls: map[string]string{}, methods: map[string]methodSpec{"call": {"receiver", "method", "."}},
		keywords: map[string]string{"subshell": "`"}, comments: set("comment")},
}

// Language returns the language name of a source file ("" if not analyzed).
func Language(file string) string {
	if l := syntax.LangFor(file); l != nil {
		return l.Name
	}
	return ""
}
