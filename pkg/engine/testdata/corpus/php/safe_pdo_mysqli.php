<?php
// safe: php.sqli.string-query
// Bound parameters, quoting and escaping with PDO and mysqli.
$pdo = new PDO('mysql:host=localhost;dbname=crm', 'crm', getenv('DB_PASS'));
$email = $_POST['email'];
$stmt = $pdo->prepare("SELECT * FROM contacts WHERE email = ?");
$stmt->execute([$email]);
$pdo->exec("DELETE FROM sessions WHERE token = " . $pdo->quote($_COOKIE['token']));

$mysqli = new mysqli('localhost', 'crm', getenv('DB_PASS'), 'crm');
$company = $mysqli->real_escape_string($_POST['company']);
$mysqli->multi_query("UPDATE contacts SET company = '$company'");
$limit = intval($_GET['limit']);
$mysqli->query("SELECT * FROM contacts LIMIT " . $limit);
$count = count($_GET);
pg_query("SELECT * FROM audit LIMIT " . $count);
pg_query("SELECT * FROM audit WHERE actor = " . pg_escape_literal($_GET['actor']));
