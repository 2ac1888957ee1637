<?php
// Query options are kept in an array; the filter entry holds request data.
$db = mysqli_connect('localhost', 'shop', getenv('DB_PASS'), 'shop');
$options = [
    'order' => 'created_at',
    'filter' => $_GET['category'],
];
$sql = "SELECT id, title FROM products WHERE category = '" . $options['filter'] . "'";
$result = mysqli_query($db, $sql); // vuln: php.sqli.string-query
