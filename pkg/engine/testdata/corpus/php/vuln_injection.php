<?php
// Request data reaching SQL, shell and code execution.

use Illuminate\Support\Facades\DB;
use Illuminate\Http\Request;

function find_user($db, $name)
{
    $sql = "SELECT * FROM users WHERE name = '" . $name . "'";
    return mysqli_query($db, $sql); // vuln: php.sqli.string-query
}

$conn = mysqli_connect("localhost", "app", getenv("DB_PASS"), "app");
find_user($conn, $_GET['name']);

$id = $_POST['id'];
$pdo = new PDO("sqlite:app.db");
$rows = $pdo->query("SELECT * FROM items WHERE id = $id"); // vuln: php.sqli.string-query

class UserController
{
    public function search(Request $request)
    {
        $term = $request->input('q');
        $users = DB::select("SELECT * FROM users WHERE name LIKE '%" . $term . "%'"); // vuln: php.sqli.string-query
        $sort = $request->query('sort');
        return User::query()->orderByRaw($sort)->get(); // vuln: php.sqli.string-query
    }

    public function ping(Request $request)
    {
        $host = $request->input('host');
        $out = shell_exec("ping -c 1 " . $host); // vuln: php.cmdi.shell
        return $this->run($host);
    }

    private function run($target)
    {
        $cmd = "nslookup $target";
        system($cmd); // vuln: php.cmdi.shell
        return `whois $target`; // vuln: php.cmdi.shell
    }
}

$file = $_GET['file'];
passthru("gzip -d " . $file); // vuln: php.cmdi.shell

$expr = $_REQUEST['expr'];
eval('$result = ' . $expr . ';'); // vuln: php.code.eval
$handler = $_GET['cb'];
call_user_func($handler, $id); // vuln: php.code.eval
$tpl = preg_replace('/\{(\w+)\}/e', $_POST['code'], $template); // vuln: php.code.eval
