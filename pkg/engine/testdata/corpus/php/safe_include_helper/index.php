<?php
// safe: php.sqli.string-query
// The page passes a number to the helper of the other file.
require_once __DIR__ . '/lib/orders.php';

$conn = mysqli_connect('localhost', 'shop', getenv('DB_PASS'), 'shop');
$order = find_order($conn, (int) $_GET['order']);
echo "<p>Order loaded</p>";
