package sast

import (
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/golang"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/java"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/javascript"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/php"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/python"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/ruby"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
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
