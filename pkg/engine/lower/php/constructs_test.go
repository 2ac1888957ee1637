package php_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/php"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump.
func TestLowerConstructs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string
	}{
		{"class constants fold their literals", `<?php
namespace App;
class C {
  const A = 0x1F;
  const B = 0b11 + 017 + 1_000;
  const D = 1.5e3;
  const E = TRUE;
  const F = "x" . "y";
}
`, []string{"global App\\C::A = 31", "= 3 + 15\n", "+ 1000\n", "global App\\C::D = 1500", "global App\\C::E = true"}},
		{"parameter and result types", `<?php
namespace App\Http;
use App\Models\User as U;
class C {
  public ?string $name = null;
  public function f(int|string $x, ?U $u, self $s, array $arr, U|null $n, callable $cb, U|false $o): static { return $this; }
}
`, []string{"func App\\Http\\C.f(x, u App\\Models\\User, s App\\Http\\C, arr array, n App\\Models\\User, cb callable, o App\\Models\\User) App\\Http\\C this=this",
			"field name string", "this.name = null"}},
		{"string forms", `<?php
function f($x) {
  $d = "a\tb\x41\101\u{42}$x";
  $e = 'q\'\n';
  $h = <<<EOT
  heredoc {$x} end
  EOT;
  $n = <<<'EOT'
  nowdoc $x
  EOT;
}
`, []string{`= "a\tbAAB" . x`, `e = "q'\\n"`, `= "heredoc " . x`, `. " end"`, `n = "nowdoc $x"`}},
		{"class names, static constants and parent calls", `<?php
namespace App;
use App\Models\User as U;
class C extends B {
  const A = 1;
  function f() {
    $k = U::class;
    $m = static::A;
    $s = self::A;
    $p = parent::f(1);
  }
}
`, []string{`k = "App\\Models\\User"`, "= global App\\C::A\n    m = ", "= global App\\C::A\n    s = ", "= call.super App\\B#f(1)"}},
		{"negative and boolean literals", `<?php
$a = -5;
$c = false;
$d = NULL;
`, []string{"a = -5", "c = false", "d = null"}},
	}
	for _, tc := range cases {
		dump := ir.Dump(lowertest.Lower(t, syntax.PHP, php.Lower, "a.php", []byte(tc.src)))
		for _, w := range tc.want {
			require.Contains(t, dump, w, "%s:\n%s", tc.name, dump)
		}
	}
}
