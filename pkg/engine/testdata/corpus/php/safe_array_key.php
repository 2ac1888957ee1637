<?php
// safe: php.sqli.string-query
// Only the fixed entry of the options array reaches the query text; the
// request value is bound as a parameter.
$db = mysqli_connect('localhost', 'shop', getenv('DB_PASS'), 'shop');
$options = [
    'order' => 'created_at',
    'filter' => $_GET['category'],
];
$options['limit'] = 20;
$sql = "SELECT id, title FROM products WHERE category = ? ORDER BY " . $options['order'] . " LIMIT " . $options['limit'];
$stmt = mysqli_prepare($db, $sql);
mysqli_stmt_bind_param($stmt, 's', $options['filter']);
mysqli_stmt_execute($stmt);
