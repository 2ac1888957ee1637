package sast

import (
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/php"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// assignSpec describes one grammar construct that binds a value to names.
type assignSpec struct {
	lhs, rhs string // field names ("@N": the N-th named child without a field)
}

// methodSpec describes a call on a receiver (obj.m(), $obj->m(), Cls::m()):
// the callee text is receiver + sep + name, and the receiver's taint flows
// into the result.
type methodSpec struct {
	recv, name, args, sep string // field names and the separator of the callee text
}

// langSpec maps the grammar of one language onto the few constructs the taint
// engine needs. Everything rule-specific lives in the YAML rule files.
type langSpec struct {
	name     string // rule language name
	grammar  func() *sitter.Language
	calls    map[string][2]string // node type -> callee field, arguments field ("#type": first child of that type)
	methods  map[string]methodSpec
	keywords map[string]string // statements that act as calls (echo, include, backticks) -> callee name; "@type": "(" + type field + ")"
	funcs    map[string]bool   // function-like node types
	assigns  map[string]assignSpec
	loops    map[string]assignSpec // for-each constructs: loop variable <- iterable
	returns  map[string]bool
	idents   map[string]bool
	strings  map[string]bool
	kwargs   map[string]bool // keyword argument node types (not positional)
	comments map[string]bool
	selfs    []string // receiver names stripped from callee text (self., this.)

	implicitReturn bool // the last expression of a body is its value (Ruby)
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var (
	pythonSpec = &langSpec{
		name:     "python",
		grammar:  python.GetLanguage,
		calls:    map[string][2]string{"call": {"function", "arguments"}},
		funcs:    set("function_definition"),
		assigns:  map[string]assignSpec{"assignment": {"left", "right"}, "augmented_assignment": {"left", "right"}, "named_expression": {"name", "value"}},
		loops:    map[string]assignSpec{"for_statement": {"left", "right"}, "for_in_clause": {"left", "right"}},
		returns:  set("return_statement"),
		idents:   set("identifier"),
		strings:  set("string"),
		kwargs:   set("keyword_argument"),
		comments: set("comment"),
		selfs:    []string{"self.", "cls."},
	}
	jsCalls   = map[string][2]string{"call_expression": {"function", "arguments"}, "new_expression": {"constructor", "arguments"}}
	jsFuncs   = set("function_declaration", "function_expression", "function", "arrow_function", "method_definition", "generator_function_declaration")
	jsAssigns = map[string]assignSpec{"variable_declarator": {"name", "value"}, "assignment_expression": {"left", "right"}, "augmented_assignment_expression": {"left", "right"}}
	jsLoops   = map[string]assignSpec{"for_in_statement": {"left", "right"}}
	jsSpec    = &langSpec{
		name: "javascript", grammar: javascript.GetLanguage, calls: jsCalls, funcs: jsFuncs, assigns: jsAssigns, loops: jsLoops,
		returns: set("return_statement"), idents: set("identifier", "shorthand_property_identifier_pattern", "shorthand_property_identifier"),
		strings: set("string"), kwargs: set(), comments: set("comment"), selfs: []string{"this."},
	}
	tsSpec  = &langSpec{}
	tsxSpec = &langSpec{}
	goSpec  = &langSpec{
		name:     "go",
		grammar:  golang.GetLanguage,
		calls:    map[string][2]string{"call_expression": {"function", "arguments"}},
		funcs:    set("function_declaration", "method_declaration", "func_literal"),
		assigns:  map[string]assignSpec{"short_var_declaration": {"left", "right"}, "assignment_statement": {"left", "right"}, "var_spec": {"name", "value"}, "const_spec": {"name", "value"}},
		loops:    map[string]assignSpec{"range_clause": {"left", "right"}},
		returns:  set("return_statement"),
		idents:   set("identifier"),
		strings:  set("interpreted_string_literal", "raw_string_literal"),
		kwargs:   set(),
		comments: set("comment"),
	}
	javaSpec = &langSpec{
		name:     "java",
		grammar:  java.GetLanguage,
		calls:    map[string][2]string{"object_creation_expression": {"type", "arguments"}},
		methods:  map[string]methodSpec{"method_invocation": {"object", "name", "arguments", "."}},
		funcs:    set("method_declaration", "constructor_declaration", "lambda_expression"),
		assigns:  map[string]assignSpec{"variable_declarator": {"name", "value"}, "assignment_expression": {"left", "right"}},
		loops:    map[string]assignSpec{"enhanced_for_statement": {"name", "value"}},
		returns:  set("return_statement"),
		idents:   set("identifier"),
		strings:  set("string_literal"),
		kwargs:   set(),
		comments: set("line_comment", "block_comment"),
		selfs:    []string{"this."},
	}
	phpSpec = &langSpec{
		name:    "php",
		grammar: php.GetLanguage,
		calls:   map[string][2]string{"function_call_expression": {"function", "arguments"}, "object_creation_expression": {"#name", "#arguments"}},
		methods: map[string]methodSpec{
			"member_call_expression":          {"object", "name", "arguments", "->"},
			"nullsafe_member_call_expression": {"object", "name", "arguments", "->"},
			"scoped_call_expression":          {"scope", "name", "arguments", "::"},
		},
		keywords: map[string]string{
			"echo_statement": "echo", "print_intrinsic": "print", "exit_statement": "exit",
			"include_expression": "include", "include_once_expression": "include_once",
			"require_expression": "require", "require_once_expression": "require_once",
			"shell_command_expression": "`", "cast_expression": "@type",
		},
		funcs: set("function_definition", "method_declaration", "anonymous_function_creation_expression", "arrow_function"),
		assigns: map[string]assignSpec{"assignment_expression": {"left", "right"}, "augmented_assignment_expression": {"left", "right"},
			"reference_assignment_expression": {"left", "right"}},
		loops:    map[string]assignSpec{"foreach_statement": {"@1", "@0"}},
		returns:  set("return_statement"),
		idents:   set("variable_name"),
		strings:  set("string", "encapsed_string", "heredoc", "nowdoc"),
		kwargs:   set(),
		comments: set("comment"),
		selfs:    []string{"$this->", "self::", "static::"},
	}
	rubySpec = &langSpec{
		name:     "ruby",
		grammar:  ruby.GetLanguage,
		calls:    map[string][2]string{},
		methods:  map[string]methodSpec{"call": {"receiver", "method", "arguments", "."}},
		keywords: map[string]string{"subshell": "`"},
		funcs:    set("method", "singleton_method", "lambda"),
		assigns:  map[string]assignSpec{"assignment": {"left", "right"}, "operator_assignment": {"left", "right"}},
		loops:    map[string]assignSpec{"for": {"pattern", "value"}},
		returns:  set("return"),
		idents:   set("identifier", "instance_variable", "class_variable", "global_variable"),
		strings:  set("string", "subshell", "heredoc_body"),
		kwargs:   set("pair"),
		comments: set("comment"),
		selfs:    []string{"self."},

		implicitReturn: true,
	}
)

func init() {
	*tsSpec = *jsSpec
	tsSpec.name, tsSpec.grammar = "typescript", typescript.GetLanguage
	tsSpec.idents = set("identifier", "shorthand_property_identifier_pattern", "shorthand_property_identifier")
	*tsxSpec = *tsSpec
	tsxSpec.grammar = tsx.GetLanguage
}

// specFor returns the language of a file by its name, or nil.
func specFor(file string) *langSpec {
	switch strings.ToLower(path.Ext(file)) {
	case ".py":
		return pythonSpec
	case ".js", ".jsx", ".mjs", ".cjs":
		return jsSpec
	case ".ts", ".mts", ".cts":
		return tsSpec
	case ".tsx":
		return tsxSpec
	case ".go":
		return goSpec
	case ".java":
		return javaSpec
	case ".php", ".phtml":
		return phpSpec
	case ".rb":
		return rubySpec
	}
	return nil
}

// Language returns the language name of a source file ("" if not analyzed).
func Language(file string) string {
	if s := specFor(file); s != nil {
		return s.name
	}
	return ""
}
