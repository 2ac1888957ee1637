package sast

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/golang"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/java"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/javascript"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/php"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/python"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/ruby"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// frontEnd lowers one parsed file into the IR.
type frontEnd func(path string, src []byte, root *syntax.Node) (*ir.File, error)

// frontEnds by syntax language name.
var frontEnds = map[string]frontEnd{
	"java":       java.Lower,
	"python":     python.Lower,
	"javascript": javascript.Lower,
	"typescript": javascript.Lower,
	"go":         golang.Lower,
	"php":        php.Lower,
	"ruby":       ruby.Lower,
}
