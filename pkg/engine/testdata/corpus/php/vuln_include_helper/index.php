<?php
// The page looks an order up through a helper defined in another file.
require_once __DIR__ . '/lib/orders.php';

$conn = mysqli_connect('localhost', 'shop', getenv('DB_PASS'), 'shop');
$order = find_order($conn, $_GET['order']);
echo "<p>Order loaded</p>";
