package dataflow_test

import "testing"

func php(code string) []src { return one("index.php", "<?php\n"+code) }

func TestFlowPHP(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"superglobal to shell", php(`
$c = $_GET['c'];
system("ping " . $c); // want:php.cmdi.shell
`)},
		{"constant command", php(`
$c = "localhost";
system("ping " . $c);
`)},
		{"escapeshellarg sanitizes", php(`
$c = escapeshellarg($_GET['c']);
system("ping " . $c);
`)},
		{"interpolated string", php(`
$c = $_POST['c'];
shell_exec("ping $c"); // want:php.cmdi.shell
`)},
		{"echo reflects input", php(`
echo "<p>" . $_GET['name'] . "</p>"; // want:php.xss.echo
`)},
		{"htmlspecialchars encodes", php(`
echo "<p>" . htmlspecialchars($_GET['name']) . "</p>";
`)},
		{"intval sanitizes sql", php(`
$id = intval($_GET['id']);
mysqli_query($conn, "select * from t where id = " . $id);
`)},
		{"string sql", php(`
$id = $_GET['id'];
mysqli_query($conn, "select * from t where id = '" . $id . "'"); // want:php.sqli.string-query
`)},
		{"array element", php(`
$a = array("safe" => "ls", "bad" => $_GET['c']);
system($a["bad"]); // want:php.cmdi.shell
system($a["safe"]);
`)},
		{"an array assigned is copied", php(`
$a = array("v" => "ls");
$b = $a;
$b["v"] = $_GET['c'];
system($a["v"]);
system($b["v"]); // want:php.cmdi.shell
`)},
		{"an array assigned by reference is shared", php(`
$a = array("v" => "ls");
$b = &$a;
$b["v"] = $_GET['c'];
system($a["v"]); // want:php.cmdi.shell
`)},
		// An object assigned is shared: "php object alias" in the aliasing tests.
		{"function returning its argument", php(`
function wrap($v) { return "ping " . $v; }
system(wrap($_GET['c'])); // want:php.cmdi.shell
system(wrap("localhost"));
`)},
		{"sink inside a function", php(`
function run($c) { system($c); } // want:php.cmdi.shell
run($_GET['c']);
`)},
		{"object property", php(`
class Job {
  public $cmd;
  function __construct($c) { $this->cmd = $c; }
  function run() { system($this->cmd); } // want:php.cmdi.shell
}
$j = new Job($_GET['c']);
$j->run();
`)},
		{"branches join", php(`
if (rand(0, 1)) { $c = $_GET['c']; } else { $c = "ls"; }
system($c); // want:php.cmdi.shell
`)},
		{"foreach over input", php(`
foreach ($_GET['cmds'] as $c) {
  system($c); // want:php.cmdi.shell
}
`)},
	})
}
