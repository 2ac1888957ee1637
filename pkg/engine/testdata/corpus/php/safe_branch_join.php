<?php
// safe: php.xss.echo
// The greeting is escaped on every path before the paths meet.
$name = $_GET['name'] ?? 'guest';
if (isset($_GET['short'])) {
    $shown = htmlspecialchars(substr($name, 0, 8), ENT_QUOTES, 'UTF-8');
} else {
    $shown = htmlspecialchars($name, ENT_QUOTES, 'UTF-8');
}
echo "<p>Hello " . $shown . "</p>";
