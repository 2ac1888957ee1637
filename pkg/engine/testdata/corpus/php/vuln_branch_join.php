<?php
// A greeting escaped on one path only: where the paths meet it may be raw.
$name = $_GET['name'] ?? 'guest';
if (isset($_GET['plain'])) {
    $shown = $name;
} else {
    $shown = htmlspecialchars($name, ENT_QUOTES, 'UTF-8');
}
echo "<p>Hello " . $shown . "</p>"; // vuln: php.xss.echo
