// Command openapi3gen converts the generated Swagger 2.0 document into the
// published OpenAPI 3.0 document: openapi3gen IN.swagger.json OUT.json.
package main

import (
	"fmt"
	"os"

	"github.com/vulnscan/vulnscan/gateway/internal/openapi3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: openapi3gen IN.swagger.json OUT.json")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi3gen:", err)
		os.Exit(1)
	}
	out, err := openapi3.Convert(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi3gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "openapi3gen:", err)
		os.Exit(1)
	}
}
